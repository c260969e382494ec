/**
 * The drivers on a real Redis Cluster of 3 masters (started by this file on loopback ports): the
 * shared suites of the bus (its contract and the shared-bus suite), rate limits and presence run
 * against it unchanged, then what only a cluster must show: every script's keys share a slot (a
 * cross-slot call would fail), keys spread over every master, membership works.
 * test/redis-cluster-failover.test.ts kills a master of a cluster with replicas.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import type { Cluster } from 'ioredis';
import { busContract, type TestEvent } from '../src/bus/contract.ts';
import { createBus } from '../src/bus/index.ts';
import { presenceContract } from '../src/presence/contract.ts';
import { createPresence } from '../src/presence/index.ts';
import { rateLimiterContract } from '../src/ratelimit/contract.ts';
import { createRateLimiter } from '../src/ratelimit/index.ts';
import { jobShard } from '../src/bus/redis-work-queue.ts';
import { redisFactory, type RedisFactory } from '../src/redis/client.ts';
import { keySlot } from '../src/redis/slots.ts';
import { redisRetentionLease } from '../src/retention/retention-lease.ts';
import { Membership } from '../src/sharding/membership.ts';
import { redisBusSuite } from './bus/redis-bus-suite.ts';
import { redisFanSuite } from './bus/redis-fan-suite.ts';
import { refuseNewConnections } from './helpers/redis.ts';
import { useTestRedisCluster } from './helpers/redis-cluster.ts';

const redisCluster = useTestRedisCluster();
const factory = (): RedisFactory => redisFactory({ url: '', clusterNodes: redisCluster().seeds, keyPrefix: '' });
const prefix = (): string => `test:${randomUUID().slice(0, 8)}:`;
const JOB_SHARDS = 4;
let adminConnection: Cluster | null = null;
/** A connection for inspecting keys, opened on first use (the cluster starts in a `before`). */
const admin = (): Cluster => (adminConnection ??= factory()('admin') as Cluster);
after(() => {
  adminConnection?.disconnect();
});
/** The masters, once the admin connection knows the slot map (it is empty before). */
const masters = async (): Promise<ReturnType<Cluster['nodes']>> => {
  const a = admin();
  if (a.status !== 'ready') await new Promise<void>((resolve, reject) => a.once('ready', resolve).once('error', reject));
  return a.nodes('master');
};

busContract('redis cluster', async ({ window, now, retry }) =>
  createBus<TestEvent, string>({ driver: 'redis', redis: factory(), keyPrefix: prefix(), nodeId: 'contract', window, now, retry, jobShards: JOB_SHARDS }),
);
redisBusSuite({
  name: 'redis cluster',
  factory,
  admin,
  jobShards: JOB_SHARDS,
  killPubSub: async () => void (await Promise.all((await masters()).map((n) => n.client('KILL', 'TYPE', 'pubsub')))),
  refuseNewConnections: async (refuse) => void (await Promise.all((await masters()).map((n) => refuseNewConnections(n, refuse)))),
});
busContract(
  'redis cluster (fan log)',
  async ({ window, now, retry }) =>
    createBus<TestEvent, string>({ driver: 'redis', redis: factory(), keyPrefix: prefix(), nodeId: 'contract', window, now, retry, jobShards: JOB_SHARDS, fan: { shards: 3, fanned: () => true } }),
  { sharedPositions: true },
);
redisFanSuite({
  name: 'redis cluster',
  factory,
  admin,
  killByName: async (part) => {
    let killed = 0;
    for (const node of await masters()) {
      const list = String(await node.client('LIST'));
      const ids = [...list.matchAll(/id=(\d+) .*?name=(\S*)/g)].filter((m) => m[2]!.includes(part)).map((m) => m[1]!);
      for (const id of ids) await node.client('KILL', 'ID', id);
      killed += ids.length;
    }
    return killed;
  },
});
rateLimiterContract('redis cluster', async () => createRateLimiter({ driver: 'redis', redis: factory()('rate-limit-test'), keyPrefix: prefix() }));
presenceContract('redis cluster', async (windowMs) => createPresence({ driver: 'redis', redis: factory()('presence-test'), keyPrefix: prefix(), windowMs }));

describe('redis cluster: keys, slots and load', () => {
  it("computes every key's slot as the servers do (hash tags included)", async () => {
    const keys = ['foo', 'chat:bus:{conv:acme:support:0192}:s', 'a{}b', 'x{a}{b}', 'é{ü}', '{', 'abc}{def}', '', 'chat:cluster:{ring}:nodes'];
    for (const key of keys) assert.equal(keySlot(key), Number(await admin().cluster('KEYSLOT', key)), JSON.stringify(key));
  });

  it("every script's keys share one slot, and the tags are per channel and per job shard, never one for all", () => {
    const p = 'chat:';
    const channels = Array.from({ length: 60 }, (_, i) => `user:acme:u${i}`);
    for (const ch of channels) {
      const base = `${p}bus:{${ch}}`;
      assert.equal(new Set([`${base}:s`, `${base}:m`, `${base}:live`].map(keySlot)).size, 1, `publish.lua keys and channel of ${ch}`);
    }
    const shards = Array.from({ length: 8 }, (_, i) => jobShard(p, i, 8));
    for (const s of shards) assert.equal(keySlot(s.stream), keySlot(s.delayed), `the job scripts' keys of shard ${s.index}`);
    assert.equal(keySlot(`${p}cluster:{ring}:nodes`), keySlot(`${p}cluster:{ring}:node-info`), 'membership.lua keys');
    // Spread: with the slots split evenly over 3 masters, channels and job shards reach them all.
    const third = (slot: number): number => Math.min(2, Math.floor(slot / (16384 / 3)));
    assert.equal(new Set(channels.map((ch) => third(keySlot(`${p}bus:{${ch}}:s`)))).size, 3);
    assert.equal(new Set(shards.map((s) => third(keySlot(s.stream)))).size, 3);
    // One Redis keeps its layout: a single shard is the `{jobs}` of old.
    assert.equal(jobShard(p, 0, 1).stream, 'chat:bus:{jobs}:s');
  });

  it('a mixed load puts keys and pub/sub links on every master; the membership keys one slot', async () => {
    const keyPrefix = prefix();
    const bus = createBus<TestEvent, string>({ driver: 'redis', redis: factory(), keyPrefix, nodeId: 'spread', jobShards: 8 });
    const limiter = createRateLimiter({ driver: 'redis', redis: factory()('rl'), keyPrefix });
    const presence = createPresence({ driver: 'redis', redis: factory()('presence'), keyPrefix, windowMs: 60_000 });
    const seen: number[] = [];
    try {
      const unsubscribe = Array.from({ length: 30 }, (_, i) => bus.subscribe(`room-${i}`, (e) => seen.push(e.event.n)));
      for (let i = 0; i < 30; i += 1) await bus.publish(`room-${i}`, { n: i });
      assert.equal(seen.length, 30, 'each publish resolved after its own listener had it');
      for (let i = 0; i < 16; i += 1) await bus.enqueue(`job-${i}`);
      for (let i = 0; i < 30; i += 1) await limiter.consume(`send:acme:u${i}`, { limit: 10, windowSeconds: 10 });
      for (let i = 0; i < 30; i += 1) await presence.heartbeat(`tenant-${i}`, 'u', Date.now());
      const all = await masters();
      assert.equal(all.length, 3);
      for (const m of all) {
        const keys = await m.keys(`${keyPrefix}*`);
        assert.ok(keys.some((k) => k.includes(':bus:{room-')), `channel keys on ${m.options.port}`);
        assert.ok(keys.some((k) => k.includes(':bus:{jobs:')), `job shards on ${m.options.port}`);
        assert.ok(keys.some((k) => k.includes(':rl:')), `rate-limit keys on ${m.options.port}`);
        assert.ok(keys.some((k) => k.includes(':presence:')), `presence keys on ${m.options.port}`);
        const clients = String(await m.client('LIST'));
        assert.equal(clients.split('\n').filter((l) => l.includes('name=spread:bus-sub')).length, 1, `one subscriber link on ${m.options.port}`);
      }
      for (const stop of unsubscribe) stop();
    } finally {
      await Promise.all([bus.close(), limiter.close(), presence.close()]);
    }
  });

  it('membership on a cluster: nodes see each other, a crash leaves every view, a leave is seen at once', async () => {
    const keyPrefix = prefix();
    const member = (id: string): Membership => new Membership({ redis: factory(), keyPrefix, nodeId: id, internalUrl: `http://127.0.0.1:1/${id}`, heartbeatMs: 100, ttlMs: 400 });
    const all = [member('a'), member('b'), member('c')];
    const ids = (m: Membership): string => m.view.nodes.map((n) => n.nodeId).join();
    try {
      for (const m of all) await m.start();
      await until(() => all.every((m) => ids(m) === 'a,b,c'), 'all three see all three');
      await all[2]!.close();
      await until(() => ids(all[0]!) === 'a,b' && ids(all[1]!) === 'a,b', 'c dropped after its TTL');
      await all[1]!.leave();
      await until(() => ids(all[0]!) === 'a', 'the leave seen');
    } finally {
      for (const m of all) await m.close();
    }
  });

  it('the retention lease is held by one node per interval', async () => {
    const key = `${prefix()}retention:lease`;
    const [a, b] = [factory()('lease-a'), factory()('lease-b')];
    try {
      const results = await Promise.all([redisRetentionLease(a, key, 'a', 60_000)(), redisRetentionLease(b, key, 'b', 60_000)()]);
      assert.deepEqual(results.sort(), [false, true]);
    } finally {
      a.disconnect();
      b.disconnect();
    }
  });
});

async function until(predicate: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
