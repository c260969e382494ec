/** The presence contract against the in-process driver, and its memory bound. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { presenceContract } from '../src/presence/contract.ts';
import { createPresence } from '../src/presence/index.ts';
import { MemoryPresence } from '../src/presence/memory-presence.ts';

presenceContract('memory', async (windowMs) => createPresence({ driver: 'memory', windowMs }));

test('memory driver: past maxEntries the stalest users are forgotten first', async () => {
  const p = new MemoryPresence({ driver: 'memory', windowMs: 60_000, maxEntries: 3 });
  const t0 = 1_700_000_000_000;
  for (const [i, u] of ['a', 'b', 'c', 'd'].entries()) await p.heartbeat('t', u, t0 + i);
  const got = await p.statuses('t', ['a', 'b', 'c', 'd'], t0 + 10);
  assert.deepEqual(got.map((e) => [e.user_id, e.status, e.last_seen_at === null]), [
    ['a', 'offline', true],
    ['b', 'online', false],
    ['c', 'online', false],
    ['d', 'online', false],
  ]);
});

test('memory driver: entries long past the window are swept', async () => {
  const p = new MemoryPresence({ driver: 'memory', windowMs: 10 });
  const t0 = 1_700_000_000_000;
  await p.heartbeat('t', 'old', t0);
  await p.heartbeat('t', 'new', t0 + 10 * 60 + 1);
  const [old] = await p.statuses('t', ['old'], t0 + 10 * 60 + 1);
  assert.deepEqual(old, { user_id: 'old', status: 'offline', last_seen_at: null });
});
