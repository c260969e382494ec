/**
 * An outcome the store fails to record (a replica dying mid-request) neither changes the answer
 * nor keeps the key locked for the pending bound: finish() answers, and records again in the
 * background. On a real SQLite store whose idempotency table fails its first call.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { begin, finish, type Claim } from '../../src/http/idempotency.ts';
import { createStore, type ChatStore } from '../../src/store/index.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-idem-finish-'));
let store: ChatStore | null = null;
after(async () => {
  await store?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a release or completion the store refuses once is recorded again in the background, and the answer goes out', async () => {
  store = await createStore({ driver: 'sqlite', path: path.join(dir, 'chat.db') });
  const real = store.idempotency;
  let failures = 1;
  const flaky: ChatStore = Object.assign(Object.create(store) as ChatStore, {
    idempotency: Object.assign(Object.create(real) as typeof real, {
      release: (...args: Parameters<typeof real.release>) => (failures-- > 0 ? Promise.reject(new Error('replica down')) : real.release(...args)),
      complete: (...args: Parameters<typeof real.complete>) => (failures-- > 0 ? Promise.reject(new Error('replica down')) : real.complete(...args)),
    }),
  });
  const a = { owner: 'node-a', live: ['node-a', 'node-b'] };
  const b = { owner: 'node-b', live: ['node-a', 'node-b'] };
  const body = Buffer.from('{"body":"hi"}');
  for (const [status, key] of [[503, 'k-released'], [201, 'k-completed']] as const) {
    failures = 1;
    const k = { principal_key: 'user:acme:bob', idempotency_key: key, method_route: 'POST /x' };
    const claim = (await begin(flaky, a, k, body)) as Claim;
    assert.ok('owner' in claim);
    await finish(flaky, claim, status, status === 201 ? '{"ok":true}' : null); // does not throw
    // Right after, the claim still names live node-a: a retry elsewhere is told to wait...
    await assert.rejects(begin(flaky, b, k, body), (e: { code?: string }) => e.code === 'idempotency_in_progress');
    // ...until the background attempt lands (0.5 s): then it is taken over (5xx) or replayed (201).
    await new Promise((r) => setTimeout(r, 900));
    const again = await begin(flaky, b, k, body);
    if (status === 503) assert.equal((again as Claim).created_at, claim.created_at, 'taken over, keeping the first claim time');
    else assert.deepEqual(again, { status: 201, body: '{"ok":true}' });
  }
});
