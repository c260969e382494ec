/** Rendezvous placement: balance, minimal movement on join and leave, determinism. */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { Ring } from '../../src/sharding/ring.ts';

const KEYS = Array.from({ length: 20_000 }, () => randomUUID());

function owners(ring: Ring): Map<string, string> {
  return new Map(KEYS.map((k) => [k, ring.owner(k) as string]));
}

test('an empty ring owns nothing; one node owns everything', () => {
  assert.equal(new Ring([]).owner('c1'), null);
  const one = new Ring(['a']);
  assert.ok(KEYS.slice(0, 100).every((k) => one.owner(k) === 'a'));
});

test('keys spread evenly over the nodes', () => {
  const nodes = ['node-a', 'node-b', 'node-c', 'node-d', 'node-e'];
  const counts = new Map<string, number>();
  for (const owner of owners(new Ring(nodes)).values()) counts.set(owner, (counts.get(owner) ?? 0) + 1);
  const fair = KEYS.length / nodes.length;
  for (const n of nodes) {
    const c = counts.get(n) ?? 0;
    assert.ok(c > fair * 0.9 && c < fair * 1.1, `${n} owns ${c} of ${KEYS.length} keys (fair share ${fair})`);
  }
});

test('a join moves only the keys the new node wins, about K/(N+1)', () => {
  const before = owners(new Ring(['n1', 'n2', 'n3', 'n4']));
  const after = owners(new Ring(['n1', 'n2', 'n3', 'n4', 'n5']));
  let moved = 0;
  for (const [k, owner] of after) {
    if (owner !== before.get(k)) {
      moved++;
      assert.equal(owner, 'n5', `key ${k} moved between old nodes`);
    }
  }
  const expected = KEYS.length / 5;
  assert.ok(moved > expected * 0.9 && moved < expected * 1.1, `moved ${moved}, expected about ${expected}`);
});

test("a leave moves only the leaver's keys", () => {
  const before = owners(new Ring(['n1', 'n2', 'n3', 'n4']));
  const after = owners(new Ring(['n1', 'n2', 'n4']));
  let moved = 0;
  for (const [k, owner] of before) {
    if (owner === 'n3') {
      moved++;
      assert.notEqual(after.get(k), 'n3');
    } else assert.equal(after.get(k), owner, `key ${k} of a surviving node moved`);
  }
  assert.ok(moved > 0);
});

test('the owner depends on the set of ids only, not on order or instance', () => {
  const a = new Ring(['x', 'y', 'z'], 1);
  const b = new Ring(['z', 'x', 'y', 'x'], 7);
  assert.deepEqual(a.nodes, ['x', 'y', 'z']);
  for (const k of KEYS.slice(0, 2000)) assert.equal(a.owner(k), b.owner(k));
});
