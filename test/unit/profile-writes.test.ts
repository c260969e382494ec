/**
 * Which IdP profiles a node writes (src/identity/profile-writes.ts): a profile seen again unchanged
 * within the bound is not written again; a changed one, one past the bound, one whose write failed,
 * and another tenant's or user's are.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ProfileWrites } from '../../src/identity/profile-writes.ts';

const bob = { user_id: 'bob', display_name: 'Bob', avatar_url: null };

describe('profile writes', () => {
  test('the same profile again within the bound is skipped; changed, past the bound or after a failure it is written', () => {
    let now = 1_000;
    const w = new ProfileWrites(60_000, 100, () => now);
    assert.equal(w.due('acme', bob), true, 'first sight');
    now += 30_000;
    assert.equal(w.due('acme', bob), false, 'unchanged 30 s later');
    assert.equal(w.due('acme', { ...bob, display_name: 'Robert' }), true, 'renamed');
    assert.equal(w.due('acme', { ...bob, display_name: 'Robert' }), false);
    assert.equal(w.due('acme', { ...bob, display_name: 'Robert', avatar_url: 'https://a.example/b.png' }), true, 'new avatar');
    assert.equal(w.due('globex', bob), true, 'another tenant');
    assert.equal(w.due('acme', { ...bob, user_id: 'carol' }), true, 'another user');
    now += 60_000;
    assert.equal(w.due('globex', bob), true, 'past the bound');
    assert.equal(w.due('globex', bob), false);
    w.forget('globex', 'bob');
    assert.equal(w.due('globex', bob), true, 'after a failed write');
  });

  test('a null name is not the text of an empty one', () => {
    const w = new ProfileWrites();
    assert.equal(w.due('acme', { ...bob, display_name: null }), true);
    assert.equal(w.due('acme', { ...bob, display_name: '' }), true);
  });

  test('bounded: past `max`, the least recently written profile is forgotten (and written again)', () => {
    const w = new ProfileWrites(60_000, 2);
    assert.equal(w.due('acme', { ...bob, user_id: 'a' }), true);
    assert.equal(w.due('acme', { ...bob, user_id: 'b' }), true);
    assert.equal(w.due('acme', { ...bob, user_id: 'c' }), true);
    assert.equal(w.due('acme', { ...bob, user_id: 'b' }), false);
    assert.equal(w.due('acme', { ...bob, user_id: 'a' }), true, 'forgotten');
  });
});
