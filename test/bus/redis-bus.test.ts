/**
 * The bus contract against the Redis Streams driver, and what only a shared bus promises: two
 * nodes (two bus instances on one Redis) see each other's events and resume from each other's
 * ids, an empty epoch fixed by head is shared and expires, a deleted stream starts a new epoch, jobs run once across nodes, a dead node's jobs are
 * claimed by a survivor, a lost subscriber connection catches up, and a Redis that is down fails
 * calls instead of hanging them. One redis-server for the file, started on a free port.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { busContract, type TestEvent } from '../../src/bus/contract.ts';
import { BusClosedError, createBus, QueueFullError, type Bus, type BusEntry, type RedisBusConfig } from '../../src/bus/index.ts';
import { redisFactory } from '../../src/redis/client.ts';
import { startTestRedis, type TestRedis } from '../helpers/redis.ts';

let server: TestRedis;
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

interface Node {
  bus: Bus<TestEvent, string>;
  /** Drops every connection of the node at once, as a crash would: no stop, no ack. */
  crash(): void;
}

/** Nodes made by one `cluster()` share a key prefix: they are nodes of one cluster. */
function cluster(url = (): string => server.url): { node: (nodeId: string, config?: Partial<RedisBusConfig>) => Node; prefix: string; all: Node[] } {
  const prefix = `test:${randomUUID()}:`;
  const all: Node[] = [];
  const node = (nodeId: string, config: Partial<RedisBusConfig> = {}): Node => {
    const connections: Redis[] = [];
    const open = redisFactory({ url: url(), keyPrefix: '' });
    const bus = createBus<TestEvent, string>({
      driver: 'redis',
      redis: (name) => {
        const connection = open(name);
        connections.push(connection);
        return connection;
      },
      keyPrefix: prefix,
      nodeId,
      ...config,
    });
    const n = { bus, crash: () => connections.forEach((c) => c.disconnect()) };
    all.push(n);
    return n;
  };
  return { node, prefix, all };
}

async function closeAll(nodes: Node[]): Promise<void> {
  await Promise.all(nodes.map((n) => n.bus.close()));
}

/** Waits for `predicate`, polling; fails after `ms` (a generous bound, not a timing assertion). */
async function until(predicate: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** readSince waits for the channel's SUBSCRIBE to be answered: after it, B receives live events. */
async function subscribed(bus: Bus<TestEvent, string>, channel: string): Promise<void> {
  await bus.readSince(channel, '1-1-0');
}

describe('redis bus across nodes', () => {
  it("an event published on A reaches B's listeners in order, with A's ids", async () => {
    const c = cluster();
    const [a, b] = [c.node('a'), c.node('b')];
    try {
      const seen: BusEntry<TestEvent>[] = [];
      b.bus.subscribe('room', (e) => seen.push(e));
      await subscribed(b.bus, 'room');
      const ids = await Promise.all(Array.from({ length: 30 }, (_, i) => a.bus.publish('room', { n: i + 1 })));
      await until(() => seen.length === 30, '30 events on B');
      assert.deepEqual(
        seen.map((e) => e.event.n),
        Array.from({ length: 30 }, (_, i) => i + 1),
      );
      assert.deepEqual(
        seen.map((e) => e.id),
        ids,
      );
      assert.ok(seen.every((e) => e.channel === 'room'));
    } finally {
      await closeAll(c.all);
    }
  });

  it('a publish on A is delivered once to a listener on A (reply and pub/sub copy deduplicated)', async () => {
    const c = cluster();
    const [a, b] = [c.node('a'), c.node('b')];
    try {
      const onA: number[] = [];
      const onB: number[] = [];
      a.bus.subscribe('room', (e) => onA.push(e.event.n));
      b.bus.subscribe('room', (e) => onB.push(e.event.n));
      await Promise.all([subscribed(a.bus, 'room'), subscribed(b.bus, 'room')]);
      for (let n = 1; n <= 5; n += 1) {
        await a.bus.publish('room', { n });
        await b.bus.publish('room', { n: n + 100 });
      }
      await until(() => onA.length >= 10 && onB.length >= 10, 'both nodes saw both publishers');
      await subscribed(a.bus, 'room'); // a round trip: late pub/sub copies would have arrived
      const expected = [1, 101, 2, 102, 3, 103, 4, 104, 5, 105];
      assert.deepEqual(onA, expected);
      assert.deepEqual(onB, expected);
    } finally {
      await closeAll(c.all);
    }
  });

  it('a listener sees the stream in order, every event of its own node included, even while its SUBSCRIBE is in flight', async () => {
    const c = cluster();
    const [a, b] = [c.node('a'), c.node('b')];
    try {
      const seen: string[] = [];
      a.bus.subscribe('room', (e) => seen.push(e.id));
      const fromA = Array.from({ length: 100 }, (_, i) => a.bus.publish('room', { n: i }));
      const fromB = Array.from({ length: 100 }, (_, i) => b.bus.publish('room', { n: 1000 + i }));
      const idsA = await Promise.all(fromA);
      assert.deepEqual(
        idsA.filter((id) => !seen.includes(id)),
        [],
        "A's listener saw each of A's events before its publish resolved",
      );
      await Promise.all(fromB);
      const epoch = idsA[0]!.split('-')[0]!;
      const stream = (await admin.xrange(`${c.prefix}bus:{room}:s`, '-', '+')).map(([id]) => `${epoch}-${id}`);
      await until(() => seen.at(-1) === stream.at(-1), 'the last event on A');
      // B's first events may precede the subscription; from the first seen on, nothing is missing.
      assert.deepEqual(seen, stream.slice(stream.length - seen.length));
    } finally {
      await closeAll(c.all);
    }
  });

  it('B resumes from an id A answered: readSince on B replays what followed it', async () => {
    const c = cluster();
    const [a, b] = [c.node('a'), c.node('b')];
    try {
      const ids: string[] = [];
      for (let n = 1; n <= 6; n += 1) ids.push(await a.bus.publish('room', { n }));
      const replay = await b.bus.readSince('room', ids[2]!);
      assert.ok(!replay.reset);
      assert.deepEqual(
        replay.events.map((e) => [e.id, e.event.n]),
        [
          [ids[3], 4],
          [ids[4], 5],
          [ids[5], 6],
        ],
      );
      assert.deepEqual(await b.bus.readSince('room', ids[5]!), { reset: false, events: [] });
    } finally {
      await closeAll(c.all);
    }
  });

  it('a deleted stream starts a new epoch, and ids of the old one reset', async () => {
    const c = cluster();
    const [a, b] = [c.node('a'), c.node('b')];
    try {
      const old = [await a.bus.publish('room', { n: 1 }), await a.bus.publish('room', { n: 2 })];
      assert.equal(await admin.del(`${c.prefix}bus:{room}:s`), 1);
      const fresh = await b.bus.publish('room', { n: 3 });
      assert.notEqual(fresh.split('-')[0], old[0]!.split('-')[0], 'a new epoch');
      assert.deepEqual(await a.bus.readSince('room', old[0]!), { reset: true });
      assert.deepEqual(await a.bus.readSince('room', old[1]!), { reset: true });
      assert.deepEqual(await a.bus.readSince('room', fresh), { reset: false, events: [] });
    } finally {
      await closeAll(c.all);
    }
  });

  it('an expired channel starts a new epoch on its next publish, and ids of the old one reset', async () => {
    const c = cluster();
    // Keys live maxAgeMs plus a margin of at least 1 s after the last publish.
    const { bus } = c.node('a', { window: { maxAgeMs: 1 } });
    try {
      const old = await bus.publish('room', { n: 1 });
      assert.ok((await admin.pttl(`${c.prefix}bus:{room}:s`)) > 0, 'the stream has a TTL');
      const gone = async (): Promise<boolean> => (await admin.exists(`${c.prefix}bus:{room}:s`, `${c.prefix}bus:{room}:m`)) === 0;
      for (let tries = 0; !(await gone()); tries += 1) {
        assert.ok(tries < 200, 'the keys expire within 10 s');
        await sleep(50);
      }
      const fresh = await bus.publish('room', { n: 2 });
      assert.notEqual(fresh.split('-')[0], old.split('-')[0]);
      assert.deepEqual(await bus.readSince('room', old), { reset: true });
    } finally {
      await closeAll(c.all);
    }
  });

  it("an empty epoch fixed by head on A is continued by B's publishes; it expires like a channel's keys, with a TTL", async () => {
    const c = cluster();
    const [a, b] = [c.node('a'), c.node('b', { window: { maxAgeMs: 1 } })];
    try {
      const head = await a.bus.head('quiet');
      assert.match(head, /^\d+-0-0$/);
      assert.equal(await admin.exists(`${c.prefix}bus:{quiet}:s`), 0, 'no stream before the first publish');
      assert.ok((await admin.pttl(`${c.prefix}bus:{quiet}:m`)) > 0, 'the empty epoch has a TTL');
      const ids = [await b.bus.publish('quiet', { n: 1 }), await b.bus.publish('quiet', { n: 2 })];
      assert.equal(ids[0]!.split('-')[0], head.split('-')[0], 'the same epoch');
      const replay = await a.bus.readSince('quiet', head);
      assert.ok(!replay.reset);
      assert.deepEqual(replay.events.map((e) => e.id), ids);
      assert.equal(await b.bus.head('quiet'), ids[1], 'head is now the newest id, on any node');

      // b's empty epoch on another channel expires after maxAgeMs + 1 s: then a new one.
      const short = await b.bus.head('short');
      for (let tries = 0; (await admin.exists(`${c.prefix}bus:{short}:m`)) === 1; tries += 1) {
        assert.ok(tries < 200, 'the meta expires within 10 s');
        await sleep(50);
      }
      const next = await b.bus.publish('short', { n: 1 });
      assert.notEqual(next.split('-')[0], short.split('-')[0], 'a new epoch once the empty one expired');
      assert.deepEqual(await b.bus.readSince('short', short), { reset: true });
    } finally {
      await closeAll(c.all);
    }
  });

  it('a listener whose subscriber connection was cut gets what it missed, in order, once', async () => {
    const c = cluster();
    const [a, b] = [c.node('a'), c.node('b')];
    try {
      const seen: number[] = [];
      b.bus.subscribe('room', (e) => seen.push(e.event.n));
      await subscribed(b.bus, 'room');
      await a.bus.publish('room', { n: 1 });
      await until(() => seen.length === 1, 'event 1 on B');
      await admin.client('KILL', 'TYPE', 'pubsub');
      for (let n = 2; n <= 5; n += 1) await a.bus.publish('room', { n });
      await until(() => seen.length >= 5, 'events 2..5 on B after the reconnect');
      await a.bus.publish('room', { n: 6 });
      await until(() => seen.length >= 6, 'event 6 live');
      assert.deepEqual(seen, [1, 2, 3, 4, 5, 6]);
    } finally {
      await closeAll(c.all);
    }
  });
});

describe('redis work queue across nodes', () => {
  it('jobs are run exactly once across consumers on two nodes', async () => {
    const c = cluster();
    const [a, b] = [c.node('a'), c.node('b')];
    try {
      const ran: Array<[string, string, number]> = [];
      const stops = [
        a.bus.consume(async (job, { attempt }) => void ran.push(['a', job, attempt]), { concurrency: 2 }),
        b.bus.consume(async (job, { attempt }) => void ran.push(['b', job, attempt]), { concurrency: 2 }),
      ];
      const jobs = Array.from({ length: 40 }, (_, i) => `job-${i}`);
      await Promise.all(jobs.map((job, i) => (i % 2 === 0 ? a : b).bus.enqueue(job)));
      await until(() => ran.length >= 40, '40 jobs run');
      await Promise.all(stops.map((stop) => stop()));
      assert.deepEqual(ran.map(([, job]) => job).sort(), [...jobs].sort());
      assert.ok(ran.every(([, , attempt]) => attempt === 1));
      assert.equal(await admin.xlen(`${c.prefix}bus:{jobs}:s`), 0, 'acked jobs leave the stream');
      assert.deepEqual(await admin.xinfo('CONSUMERS', `${c.prefix}bus:{jobs}:s`, 'workers'), [], 'stopped consumers leave the group');
    } finally {
      await closeAll(c.all);
    }
  });

  it("a dead node's running job is claimed by a survivor after claimIdleMs, not before", async () => {
    const c = cluster();
    const claimIdleMs = 400;
    const [a, b] = [c.node('a', { claimIdleMs, blockMs: 50 }), c.node('b', { claimIdleMs, blockMs: 50 })];
    try {
      const onA: number[] = [];
      const onB: Array<[string, number]> = [];
      a.bus.consume(() => {
        onA.push(1);
        return new Promise<void>(() => undefined); // hangs: the node is busy, then dies
      });
      await a.bus.enqueue('slow');
      await until(() => onA.length === 1, 'A took the job');
      b.bus.consume(async (job, { attempt }) => void onB.push([job, attempt]));
      // A is alive and its heartbeat keeps the job: several claim periods pass without a steal.
      await sleep(claimIdleMs * 3);
      assert.deepEqual(onB, [], 'a live node keeps its running job');
      a.crash();
      await until(() => onB.length === 1, 'B claimed the job');
      assert.deepEqual(onB, [['slow', 1]], 'an interrupted run is not a failed attempt');
      await until(() => onB.length === 1 && onA.length === 1, 'settled');
      const pending = (await admin.xpending(`${c.prefix}bus:{jobs}:s`, 'workers')) as [number, ...unknown[]];
      assert.equal(pending[0], 0, 'B acked it');
    } finally {
      await closeAll(c.all);
    }
  });

  it('a failing job is retried across nodes with increasing attempts, then given up once', async () => {
    const c = cluster();
    const givenUp: Array<[unknown, string]> = [];
    const config: Partial<RedisBusConfig> = {
      retry: (attempt) => (attempt < 3 ? 5 : null),
      onGiveUp: (job, error) => givenUp.push([job, (error as Error).message]),
    };
    const [a, b] = [c.node('a', config), c.node('b', config)];
    try {
      const attempts: number[] = [];
      const handler = async (_job: string, { attempt }: { attempt: number }): Promise<void> => {
        attempts.push(attempt);
        throw new Error(`failure ${attempt}`);
      };
      const stops = [a.bus.consume(handler), b.bus.consume(handler)];
      await a.bus.enqueue('doomed');
      await until(() => givenUp.length === 1, 'the policy gave up');
      await sleep(50); // a fourth delivery would show within this margin (retries are 5 ms)
      await Promise.all(stops.map((stop) => stop()));
      assert.deepEqual(attempts, [1, 2, 3]);
      assert.deepEqual(givenUp, [['doomed', 'failure 3']]);
      assert.equal(await admin.xlen(`${c.prefix}bus:{jobs}:s`), 0);
      assert.equal(await admin.zcard(`${c.prefix}bus:{jobs}:delayed`), 0);
    } finally {
      await closeAll(c.all);
    }
  });

  it('refuses jobs beyond maxQueuedJobs, counted across the cluster, with QueueFullError', async () => {
    const c = cluster();
    const [a, b] = [c.node('a', { maxQueuedJobs: 2 }), c.node('b', { maxQueuedJobs: 2 })];
    try {
      await a.bus.enqueue('1');
      await b.bus.enqueue('2');
      await assert.rejects(a.bus.enqueue('3'), QueueFullError);
      await assert.rejects(b.bus.enqueue('3'), QueueFullError);
    } finally {
      await closeAll(c.all);
    }
  });
});

describe('redis bus lifecycle', () => {
  it('when Redis is down, publish, readSince and enqueue reject within a bound instead of hanging', async () => {
    const own = await startTestRedis();
    const c = cluster(() => own.url);
    const { bus } = c.node('a');
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
      await closeAll(c.all);
      await own.stop();
    }
  });

  it('after close every call is refused, and close is idempotent', async () => {
    const c = cluster();
    const { bus } = c.node('a');
    await bus.close();
    await bus.close();
    await assert.rejects(bus.publish('a', { n: 1 }), BusClosedError);
    await assert.rejects(bus.readSince('a', '1-1-0'), BusClosedError);
    await assert.rejects(bus.enqueue('j'), BusClosedError);
    assert.throws(() => bus.subscribe('a', () => {}), BusClosedError);
    assert.throws(() => bus.consume(async () => {}), BusClosedError);
  });

  it('refuses a configuration out of range', () => {
    const c = cluster();
    assert.throws(() => c.node('a', { window: { maxEventsPerChannel: 0 } }), RangeError);
    assert.throws(() => c.node('a', { claimIdleMs: 1.5 }), RangeError);
    assert.throws(() => c.node('a b'), RangeError);
  });
});
