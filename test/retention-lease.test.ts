/**
 * One purging node per interval in a cluster: the retention lease on a real redis-server, and a
 * job that does not hold the lease skipping its tick without touching the store.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Redis } from 'ioredis';
import pino from 'pino';
import { newRetentionStats, startRetentionJob } from '../src/retention/retention-job.ts';
import { redisRetentionLease } from '../src/retention/retention-lease.ts';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createStore, sqliteStorePath } from '../src/store/index.ts';
import { startTestRedis, type TestRedis } from './helpers/redis.ts';

let redis: TestRedis;
let a: Redis;
let b: Redis;
before(async () => {
  redis = await startTestRedis();
  a = new Redis(redis.url);
  b = new Redis(redis.url);
});
after(async () => {
  a.disconnect();
  b.disconnect();
  await redis.stop();
});

test('the lease: one holder per interval, taken over once it expires', async () => {
  const key = `lease-${Date.now()}`;
  const leaseA = redisRetentionLease(a, key, 'node-a', 600);
  const leaseB = redisRetentionLease(b, key, 'node-b', 600);
  assert.equal(await leaseA(), true);
  assert.equal(await leaseB(), false, 'held by node-a');
  assert.equal(await leaseA(), false, 'not twice in one interval, not even by the holder');
  assert.equal(await b.get(key), 'node-a');
  await new Promise((r) => setTimeout(r, 600));
  assert.equal(await leaseB(), true, 'expired before the next interval: another node takes it');
});

test('a job without the lease skips its tick; the holder purges (real SQLite store)', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'retention-lease-'));
  const store = await createStore({ driver: 'sqlite', path: sqliteStorePath(dir) });
  try {
    const ctx = { tenant_id: `t-${randomUUID()}`, application_id: 'app' };
    const conversation_id = randomUUID();
    await store.conversations.create({ ...ctx, conversation_id, type: 'GROUP', name: 'old', description: null, created_by_user_id: 'u', created_by_client_id: null, members: [{ member_id: randomUUID(), user_id: 'u', role: 'OWNER' }], at: '2020-01-01T00:00:00.000Z' });
    await store.messages.append({ ...ctx, conversation_id, epoch: 1, message_id: randomUUID(), seq: 1, sender_user_id: 'u', sender_client_id: null, body: 'ancient', message_type: 'TEXT', at: '2020-01-01T00:00:01.000Z' });
    await store.settings.update(ctx.tenant_id, { message_retention_days: 1 });
    const count = async () => (await store.messages.list({ ...ctx, conversation_id, viewer_user_id: null, limit: 10 }))!.items.length;
    const stats = newRetentionStats();
    const log = pino({ level: 'silent' });
    const other = startRetentionJob(store, 1000, log, { stats, lease: async () => false });
    await new Promise((r) => setTimeout(r, 1300));
    await other.stop();
    assert.deepEqual([stats.skipped, stats.runs, await count()], [1, 0, 1], 'skipped: nothing purged');
    const holder = startRetentionJob(store, 1000, log, { stats, lease: async () => true });
    await new Promise((r) => setTimeout(r, 1300));
    await holder.stop();
    assert.deepEqual([stats.runs, stats.deleted, await count()], [1, 1, 0], 'the holder purged');
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
