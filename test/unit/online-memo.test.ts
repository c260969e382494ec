import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createPresence, OnlineMemo, type Presence } from '../../src/presence/index.ts';

test('online memo: answers from memory while every user is known online, asks again past a window end, never remembers offline', async () => {
  const inner = createPresence({ driver: 'memory', windowMs: 1000 });
  let asked = 0;
  const presence: Presence = { driver: 'memory', windowMs: 1000, heartbeat: (t, u, n) => inner.heartbeat(t, u, n), statuses: (t, u, n) => (asked++, inner.statuses(t, u, n)), close: () => inner.close() };
  const memo = new OnlineMemo(presence);
  await presence.heartbeat('acme', 'ann', 0);
  await presence.heartbeat('acme', 'bob', 100);
  assert.equal(await memo.allOnline('acme', ['ann', 'bob'], 10), true);
  assert.equal(asked, 1);
  assert.equal(memo.allOnline('acme', ['ann', 'bob'], 1000), true, 'known online until 0 + 1000: no question');
  assert.equal(asked, 1);
  assert.equal(memo.allOnline('other', ['ann'], 10) instanceof Promise, true, 'tenants apart');
  assert.equal(await memo.allOnline('acme', ['ann', 'bob'], 1001), false, "ann's window ended: asked, offline");
  assert.equal(asked, 3);
  await presence.heartbeat('acme', 'ann', 1050);
  assert.equal(await memo.allOnline('acme', ['ann', 'bob'], 1060), true, 'offline was not remembered');
  assert.equal(memo.allOnline('acme', ['ann'], 2050), true);
  await presence.close();
});
