/** UUIDv7 ids: RFC 9562 layout, ordered by their millisecond, unique. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { uuidv7, uuidv7Of } from '../../src/actors/ids.ts';

test('uuidv7: version 7, variant 10, the millisecond in the first 48 bits', () => {
  const now = Date.UTC(2026, 10, 23, 12, 0, 0, 123);
  const id = uuidv7(now);
  assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(parseInt(id.replace(/-/g, '').slice(0, 12), 16), now);
});

test('uuidv7: ids of later milliseconds sort after earlier ones; 100,000 ids are distinct', () => {
  const a = uuidv7(1_700_000_000_000);
  const b = uuidv7(1_700_000_000_001);
  const c = uuidv7(2_000_000_000_000);
  assert.ok(a < b && b < c);
  const seen = new Set<string>();
  for (let i = 0; i < 100_000; i += 1) seen.add(uuidv7(1_700_000_000_000));
  assert.equal(seen.size, 100_000);
});

test('uuidv7Of: the same time and seed make the same valid UUIDv7; another seed or time another id', () => {
  const ms = Date.UTC(2026, 10, 26, 12, 0, 0, 7);
  const id = uuidv7Of(ms, 'seed');
  assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(parseInt(id.replace(/-/g, '').slice(0, 12), 16), ms);
  assert.equal(uuidv7Of(ms, 'seed'), id);
  assert.notEqual(uuidv7Of(ms, 'seed2'), id);
  assert.notEqual(uuidv7Of(ms + 1, 'seed'), id);
  assert.equal(uuidv7Of(ms + 1, 'seed').slice(14), id.slice(14), 'the bits after the time are the digest of the seed');
});
