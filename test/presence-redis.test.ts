/**
 * The presence contract against the Redis driver on a real redis-server of this file's own, plus
 * what only a shared driver must prove: a heartbeat on one node is seen from another, the set is
 * trimmed and bounded, and an unreachable Redis rejects.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';

import { presenceContract } from '../src/presence/contract.ts';
import { createPresence } from '../src/presence/index.ts';
import type { Presence } from '../src/presence/types.ts';
import { redisFactory, type RedisClient } from '../src/redis/client.ts';
import { quietConnection, startTestRedis, type TestRedis } from './helpers/redis.ts';

const PREFIX = `test:${randomUUID()}:`;
const T0 = 1_700_000_000_000;
let server: TestRedis;

/** A connection as a node opens it; the tests expect and assert failures, so errors are not logged. */
const connect = (url: string, name: string): RedisClient => quietConnection(url, PREFIX, name);

function presence(windowMs: number, options: { url?: string; maxEntriesPerTenant?: number } = {}): Presence {
  const redis = connect(options.url ?? server.url, 'presence-test');
  return createPresence({ driver: 'redis', redis, keyPrefix: PREFIX, windowMs, maxEntriesPerTenant: options.maxEntriesPerTenant });
}

before(async () => {
  server = await startTestRedis();
});

after(async () => {
  await server.stop();
});

presenceContract('redis', async (windowMs) => presence(windowMs));

describe('RedisPresence as a shared driver', () => {
  it('a heartbeat on node A is seen from node B, and neither moves last_seen_at back', async () => {
    const [a, b] = [presence(1000), presence(1000)];
    const tenant = `t-${randomUUID()}`;
    try {
      await a.heartbeat(tenant, 'ann', T0 + 900);
      await b.heartbeat(tenant, 'ann', T0 + 100);
      for (const node of [a, b]) {
        assert.deepEqual(await node.statuses(tenant, ['ann'], T0 + 1500), [
          { user_id: 'ann', status: 'online', last_seen_at: new Date(T0 + 900).toISOString() },
        ]);
      }
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('trims entries past 60 windows on heartbeat, keeping last_seen_at of the recently offline', async () => {
    const p = presence(1000);
    const probe = connect(server.url, 'probe');
    const tenant = `t-${randomUUID()}`;
    try {
      await p.heartbeat(tenant, 'old', T0);
      await p.heartbeat(tenant, 'edge', T0 + 1);
      await p.heartbeat(tenant, 'new', T0 + 60_001);
      assert.deepEqual(await p.statuses(tenant, ['old', 'edge', 'new'], T0 + 60_001), [
        { user_id: 'old', status: 'offline', last_seen_at: null },
        { user_id: 'edge', status: 'offline', last_seen_at: new Date(T0 + 1).toISOString() },
        { user_id: 'new', status: 'online', last_seen_at: new Date(T0 + 60_001).toISOString() },
      ]);
      const key = `${PREFIX}presence:${tenant}`;
      assert.deepEqual(await probe.zrange(key, 0, -1), ['edge', 'new']);
      const ttl = await probe.pttl(key);
      assert.ok(ttl > 50_000 && ttl <= 60_000, `the tenant's set expires once its newest entry is forgotten (pttl ${ttl})`);
    } finally {
      await p.close();
      await probe.quit();
    }
  });

  it('past maxEntriesPerTenant the stalest users are forgotten first', async () => {
    const p = presence(60_000, { maxEntriesPerTenant: 3 });
    const tenant = `t-${randomUUID()}`;
    try {
      for (const [i, u] of ['a', 'b', 'c', 'd'].entries()) await p.heartbeat(tenant, u, T0 + i);
      const got = await p.statuses(tenant, ['a', 'b', 'c', 'd'], T0 + 10);
      assert.deepEqual(got.map((e) => [e.user_id, e.status, e.last_seen_at === null]), [
        ['a', 'offline', true],
        ['b', 'online', false],
        ['c', 'online', false],
        ['d', 'online', false],
      ]);
    } finally {
      await p.close();
    }
  });

  it('rejects (rather than hangs) when its Redis stops, and after close()', { timeout: 15_000 }, async () => {
    const own = await startTestRedis();
    const p = presence(1000, { url: own.url });
    const tenant = `t-${randomUUID()}`;
    try {
      await p.heartbeat(tenant, 'ann', T0);
      await own.stop();
      await assert.rejects(p.heartbeat(tenant, 'ann', T0 + 1));
      await assert.rejects(p.statuses(tenant, ['ann'], T0 + 1));
    } finally {
      await p.close();
      await own.stop();
    }
    await assert.rejects(p.statuses(tenant, ['ann'], T0 + 1), /closed/);
  });
});
