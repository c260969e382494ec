/** UUIDv7 ids: RFC 9562 layout, ordered by their millisecond, unique. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { uuidv7 } from '../../src/actors/ids.ts';

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
