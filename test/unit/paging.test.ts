import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { ApiError } from '../../src/errors/catalog.ts';
import { CursorCodec, loadCursorSecret } from '../../src/api/paging/cursor.ts';
import { pageLimit } from '../../src/api/paging/limit.ts';

const codec = new CursorCodec(Buffer.alloc(32, 7));
const isCode = (code: string) => (err: unknown) => err instanceof ApiError && err.code === code;

test('a cursor round-trips its position for the same list only', () => {
  const c = codec.encode('messages', 'conv-1', { seq: 42 });
  assert.deepEqual(codec.decode('messages', 'conv-1', c), { seq: 42 });
  assert.throws(() => codec.decode('messages', 'conv-2', c), isCode('invalid_cursor'), 'another conversation');
  assert.throws(() => codec.decode('members', 'conv-1', c), isCode('invalid_cursor'), 'another kind of list');
});

test('tampered, truncated, foreign or garbage cursors are invalid_cursor', () => {
  const c = codec.encode('messages', 'conv-1', { seq: 42 });
  const [payload, mac] = c.split('.') as [string, string];
  const forgedPayload = Buffer.from(JSON.stringify({ v: 1, k: 'messages', s: 'conv-1', p: { seq: 1 } })).toString('base64url');
  const other = new CursorCodec(Buffer.alloc(32, 8)).encode('messages', 'conv-1', { seq: 42 });
  for (const bad of ['', '.', 'abc', payload, `${payload}.`, `.${mac}`, `${forgedPayload}.${mac}`, `${payload}.${mac.slice(1)}`, `${payload}x.${mac}`, other, `${c}.x`]) {
    assert.throws(() => codec.decode('messages', 'conv-1', bad), isCode('invalid_cursor'), JSON.stringify(bad));
  }
});

test('limit: default 50, capped at 100, non-positive-integers refused', () => {
  assert.equal(pageLimit(undefined), 50);
  assert.equal(pageLimit('1'), 1);
  assert.equal(pageLimit('100'), 100);
  assert.equal(pageLimit('101'), 100);
  assert.equal(pageLimit('99999999999999999999'), 100);
  for (const bad of ['0', '-1', '1.5', 'abc', '', '1e2', ' 5', '0x10']) assert.throws(() => pageLimit(bad), isCode('invalid_limit'), bad);
});

test('the cursor secret is generated once and kept', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cursor-'));
  const a = loadCursorSecret(null, dir);
  const b = loadCursorSecret(null, dir);
  assert.equal(a.length, 32);
  assert.deepEqual(a, b);
  assert.deepEqual(loadCursorSecret('00'.repeat(32), dir), Buffer.alloc(32));
  fs.rmSync(dir, { recursive: true });
});
