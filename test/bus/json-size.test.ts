/**
 * json-size.ts: the local bus's measure of an event, the length of its JSON without building it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jsonSize } from '../../src/bus/json-size.ts';

test('equals JSON.stringify(value).length for what events hold', () => {
  const values: unknown[] = [
    null, true, false, 0, -12, 3.25, 1e21, 'plain', '', 'ünïcødé 😀', [], {}, [1, 'a', null, [2, [3]]],
    { a: 1, b: undefined, c: () => 1, d: [undefined, () => 2], e: { f: null } },
    {
      type: 'message.created', tenant_id: 'acme', seq: 1234, occurred_at: '2026-11-23T18:00:00.000Z',
      data: { message: { body: 'x'.repeat(300), attachments: [{ file_id: 'f1', name: 'a.pdf', size: 12 }], mentioned_user_ids: ['bob'], reactions: [], edited_at: null } },
    },
  ];
  for (const v of values) assert.equal(jsonSize(v), JSON.stringify(v).length, JSON.stringify(v));
  assert.equal(jsonSize(Number.NaN), JSON.stringify(Number.NaN).length, 'NaN is null');
});

test('escaped characters: quotes and backslashes exactly, control characters close', () => {
  for (const s of ['say "hi"', 'C:\\path', 'line\nbreak\ttab']) assert.equal(jsonSize(s), JSON.stringify(s).length, s);
  const control = 'a\u0001b';
  assert.ok(Math.abs(jsonSize(control) - JSON.stringify(control).length) <= 5);
});

test('does not follow a cycle forever', () => {
  const a: Record<string, unknown> = { name: 'a' };
  a.self = a;
  assert.ok(jsonSize(a) > 0);
});
