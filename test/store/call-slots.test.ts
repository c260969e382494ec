import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CallSlots } from '../../src/store/sqlite/call-slots.ts';

test('call slots: each value comes back once by its id; ids are reused only once taken', () => {
  const slots = new CallSlots<string>();
  const a = slots.add('a');
  const b = slots.add('b');
  const c = slots.add('c');
  assert.equal(new Set([a, b, c]).size, 3, 'ids in flight are distinct');
  assert.equal(slots.size, 3);
  assert.equal(slots.take(b), 'b');
  assert.equal(slots.take(b), undefined, 'a second take finds nothing');
  assert.equal(slots.size, 2);
  const d = slots.add('d');
  assert.equal(d, b, 'a freed id is reused');
  assert.deepEqual(slots.ids().sort(), [a, c, d].sort());
  for (const id of slots.ids()) slots.take(id);
  assert.equal(slots.size, 0);
  assert.deepEqual(slots.ids(), []);
  assert.equal(slots.take(12345), undefined, 'an id never issued finds nothing');
});

test('call slots: against a Map model over many random adds and takes', () => {
  const slots = new CallSlots<number>();
  const model = new Map<number, number>();
  let seed = 7;
  const rnd = (n: number): number => ((seed = (seed * 1103515245 + 12345) >>> 0) % n);
  for (let i = 0; i < 20_000; i += 1) {
    if (model.size === 0 || rnd(3) > 0) {
      const id = slots.add(i);
      assert.equal(model.has(id), false, 'an id in flight is never issued twice');
      model.set(id, i);
    } else {
      const ids = [...model.keys()];
      const id = ids[rnd(ids.length)]!;
      assert.equal(slots.take(id), model.get(id));
      model.delete(id);
    }
    assert.equal(slots.size, model.size);
  }
  assert.deepEqual(slots.ids().sort((x, y) => x - y), [...model.keys()].sort((x, y) => x - y));
});
