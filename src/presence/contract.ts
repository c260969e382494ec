/**
 * The contract every Presence driver passes, as node:test tests. A driver's test file calls
 * `presenceContract('<driver>', make)` once; the suite is never copied per driver. `make` gets the
 * window to configure and is called once per test; the driver is closed after it. Tenants are
 * unique per test, so a shared store (Redis) needs no flushing. Time is injected, never slept on.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Presence } from './types.ts';

const T0 = 1_700_000_000_000;

export function presenceContract(name: string, make: (windowMs: number) => Promise<Presence>): void {
  describe(`Presence contract: ${name}`, () => {
    const run = (title: string, windowMs: number, body: (p: Presence, tenant: string) => Promise<void>): void => {
      it(title, async () => {
        const p = await make(windowMs);
        try {
          await body(p, `contract-${randomUUID()}`);
        } finally {
          await p.close();
        }
      });
    };

    run('a user never seen is offline with last_seen_at null', 1000, async (p, t) => {
      assert.deepEqual(await p.statuses(t, ['ann'], T0), [{ user_id: 'ann', status: 'offline', last_seen_at: null }]);
    });

    run('online within the window (inclusive), offline after it, last_seen_at kept', 1000, async (p, t) => {
      await p.heartbeat(t, 'ann', T0);
      const seen = new Date(T0).toISOString();
      assert.deepEqual(await p.statuses(t, ['ann'], T0), [{ user_id: 'ann', status: 'online', last_seen_at: seen }]);
      assert.deepEqual(await p.statuses(t, ['ann'], T0 + 1000), [{ user_id: 'ann', status: 'online', last_seen_at: seen }]);
      assert.deepEqual(await p.statuses(t, ['ann'], T0 + 1001), [{ user_id: 'ann', status: 'offline', last_seen_at: seen }]);
    });

    run('a later heartbeat extends; an older one never moves last_seen_at back', 1000, async (p, t) => {
      await p.heartbeat(t, 'ann', T0);
      await p.heartbeat(t, 'ann', T0 + 900);
      await p.heartbeat(t, 'ann', T0 + 100);
      const [e] = await p.statuses(t, ['ann'], T0 + 1800);
      assert.equal(e?.status, 'online');
      assert.equal(e?.last_seen_at, new Date(T0 + 900).toISOString());
    });

    run('one entry per distinct id, in the order asked', 1000, async (p, t) => {
      await p.heartbeat(t, 'bob', T0);
      const got = await p.statuses(t, ['cat', 'bob', 'cat', 'ann'], T0);
      assert.deepEqual(got.map((e) => [e.user_id, e.status]), [['cat', 'offline'], ['bob', 'online'], ['ann', 'offline']]);
      assert.deepEqual(await p.statuses(t, [], T0), []);
    });

    run('tenants are isolated', 1000, async (p, t) => {
      await p.heartbeat(t, 'ann', T0);
      const [e] = await p.statuses(`${t}-other`, ['ann'], T0);
      assert.equal(e?.status, 'offline');
    });

    run('many users stay correct (the driver bounds memory without losing recent heartbeats)', 60_000, async (p, t) => {
      for (let i = 0; i < 2000; i += 1) await p.heartbeat(t, `u${i}`, T0 + i);
      const got = await p.statuses(t, ['u0', 'u1999'], T0 + 2000);
      assert.deepEqual(got.map((e) => e.status), ['online', 'online']);
    });
  });
}
