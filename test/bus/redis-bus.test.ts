/**
 * The bus contract and the shared-bus suite (redis-bus-suite.ts: nodes see each other's events
 * and jobs, catch up after a lost subscriber connection, ...) against the Redis Streams driver on
 * one redis-server, started on a free port for this file; and a Redis that is down fails calls
 * instead of hanging them. test/redis-cluster.test.ts runs the same suites on a Redis Cluster.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { busContract, type TestEvent } from '../../src/bus/contract.ts';
import { createBus } from '../../src/bus/index.ts';
import { redisFactory } from '../../src/redis/client.ts';
import { refuseNewConnections, startTestRedis } from '../helpers/redis.ts';
import { redisBusSuite } from './redis-bus-suite.ts';
import { redisFanSuite } from './redis-fan-suite.ts';

let server: Awaited<ReturnType<typeof startTestRedis>>;
let admin: Redis;

before(async () => {
  server = await startTestRedis();
  admin = new Redis(server.url);
});

after(async () => {
  admin.disconnect();
  await server.stop();
});

busContract('redis', async ({ window, now, retry }) =>
  createBus<TestEvent, string>({ driver: 'redis', redis: redisFactory({ url: server.url, keyPrefix: '' }), keyPrefix: `contract:${randomUUID()}:`, nodeId: 'contract', window, now, retry }),
);

// The fan log: every channel fanned, over 3 shards (publishes without a key share one).
busContract(
  'redis (fan log)',
  async ({ window, now, retry }) =>
    createBus<TestEvent, string>({ driver: 'redis', redis: redisFactory({ url: server.url, keyPrefix: '' }), keyPrefix: `contract:${randomUUID()}:`, nodeId: 'contract', window, now, retry, fan: { shards: 3, fanned: () => true } }),
  { sharedPositions: true },
);

redisBusSuite({
  name: 'redis',
  factory: () => redisFactory({ url: server.url, keyPrefix: '' }),
  admin: () => admin,
  jobShards: 1,
  killPubSub: async () => void (await admin.client('KILL', 'TYPE', 'pubsub')),
  refuseNewConnections: (refuse) => refuseNewConnections(admin, refuse),
});

redisFanSuite({
  name: 'redis',
  factory: () => redisFactory({ url: server.url, keyPrefix: '' }),
  admin: () => admin,
  killByName: async (part) => {
    const list = String(await admin.client('LIST'));
    const ids = [...list.matchAll(/id=(\d+) .*?name=(\S*)/g)].filter((m) => m[2]!.includes(part)).map((m) => m[1]!);
    for (const id of ids) await admin.client('KILL', 'ID', id);
    return ids.length;
  },
});

describe('redis: bus when its Redis stops', () => {
  it('when Redis is down, publish, readSince and enqueue reject within a bound instead of hanging', async () => {
    const own = await startTestRedis();
    const bus = createBus<TestEvent, string>({ driver: 'redis', redis: redisFactory({ url: own.url, keyPrefix: '' }), keyPrefix: `test:${randomUUID()}:`, nodeId: 'a' });
    try {
      const id = await bus.publish('room', { n: 1 });
      await own.stop();
      const bound = async <T>(p: Promise<T>): Promise<T> => {
        let timer: NodeJS.Timeout | undefined;
        try {
          return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('still pending after 10 s')), 10_000)))]);
        } finally {
          clearTimeout(timer);
        }
      };
      const failed = (e: Error): boolean => !e.message.startsWith('still pending');
      await Promise.all([
        assert.rejects(bound(bus.publish('room', { n: 2 })), failed),
        assert.rejects(bound(bus.readSince('room', id)), failed),
        assert.rejects(bound(bus.enqueue('j')), failed),
      ]);
    } finally {
      await bus.close();
      await own.stop();
    }
  });
});
