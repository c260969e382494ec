/**
 * What only a shared bus promises, for every Redis deployment the driver runs on (one server,
 * a Redis Cluster): two nodes (two bus instances) see each other's events and resume from each
 * other's ids, an empty epoch fixed by head is shared and expires, a deleted stream starts a new
 * epoch, jobs run once across nodes, a dead node's jobs are claimed by a survivor, a lost
 * subscriber connection catches up. One suite; each test file calls it with its target.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { TestEvent } from '../../src/bus/contract.ts';
import { BusClosedError, createBus, QueueFullError, type Bus, type BusEntry, type RedisBusConfig } from '../../src/bus/index.ts';
import { jobShard, type Shard } from '../../src/bus/redis-work-queue.ts';
import type { RedisClient, RedisFactory } from '../../src/redis/client.ts';

export interface RedisTarget {
  /** In the suite titles: `redis`, `redis cluster`. */
  name: string;
  /** A fresh connection factory to the target (one per simulated node). */
  factory(): RedisFactory;
  /** A connection for inspecting keys. */
  admin(): RedisClient;
  /** The bus's jobShards on this target. */
  jobShards: number;
  /** Cuts every pub/sub connection to the target (CLIENT KILL TYPE pubsub on every node). */
  killPubSub(): Promise<void>;
  /** Makes every node of the target refuse new connections (maxclients), or take them again. */
  refuseNewConnections(refuse: boolean): Promise<void>;
}

interface Node {
  bus: Bus<TestEvent, string>;
  /** Drops every connection of the node at once, as a crash would: no stop, no ack. */
  crash(): void;
}

/** Nodes made by one `cluster()` share a key prefix: they are nodes of one cluster. */
function cluster(target: RedisTarget): { node: (nodeId: string, config?: Partial<RedisBusConfig>) => Node; prefix: string; all: Node[] } {
  const prefix = `test:${randomUUID()}:`;
  const all: Node[] = [];
  const node = (nodeId: string, config: Partial<RedisBusConfig> = {}): Node => {
    const connections: RedisClient[] = [];
    const open = target.factory();
    const bus = createBus<TestEvent, string>({
      driver: 'redis',
      redis: (name) => {
        const connection = open(name);
        connections.push(connection);
        return connection;
      },
      keyPrefix: prefix,
      nodeId,
      jobShards: target.jobShards,
      ...config,
    });
    const n = { bus, crash: () => connections.forEach((c) => c.disconnect()) };
    all.push(n);
    return n;
  };
  return { node, prefix, all };
}

/** The job shards of a cluster of nodes with this prefix. */
const shards = (target: RedisTarget, prefix: string): Shard[] => Array.from({ length: target.jobShards }, (_, i) => jobShard(prefix, i, target.jobShards));

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

export function redisBusSuite(target: RedisTarget): void {
  describe(`${target.name}: bus across nodes`, () => {
    it("an event published on A reaches B's listeners in order, with A's ids", async () => {
      const c = cluster(target);
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
      const c = cluster(target);
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
      const c = cluster(target);
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
        const stream = (await target.admin().xrange(`${c.prefix}bus:{room}:s`, '-', '+')).map(([id]) => `${epoch}-${id}`);
        await until(() => seen.at(-1) === stream.at(-1), 'the last event on A');
        // B's first events may precede the subscription; from the first seen on, nothing is missing.
        assert.deepEqual(seen, stream.slice(stream.length - seen.length));
      } finally {
        await closeAll(c.all);
      }
    });

    it('B resumes from an id A answered: readSince on B replays what followed it', async () => {
      const c = cluster(target);
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
      const c = cluster(target);
      const [a, b] = [c.node('a'), c.node('b')];
      try {
        const old = [await a.bus.publish('room', { n: 1 }), await a.bus.publish('room', { n: 2 })];
        assert.equal(await target.admin().del(`${c.prefix}bus:{room}:s`), 1);
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
      const c = cluster(target);
      // Keys live maxAgeMs plus a margin of at least 1 s after the last publish.
      const { bus } = c.node('a', { window: { maxAgeMs: 1 } });
      try {
        const old = await bus.publish('room', { n: 1 });
        assert.ok((await target.admin().pttl(`${c.prefix}bus:{room}:s`)) > 0, 'the stream has a TTL');
        const gone = async (): Promise<boolean> => (await target.admin().exists(`${c.prefix}bus:{room}:s`, `${c.prefix}bus:{room}:m`)) === 0;
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
      const c = cluster(target);
      const [a, b] = [c.node('a'), c.node('b', { window: { maxAgeMs: 1 } })];
      try {
        const head = await a.bus.head('quiet');
        assert.match(head, /^\d+-0-0$/);
        assert.equal(await target.admin().exists(`${c.prefix}bus:{quiet}:s`), 0, 'no stream before the first publish');
        assert.ok((await target.admin().pttl(`${c.prefix}bus:{quiet}:m`)) > 0, 'the empty epoch has a TTL');
        const ids = [await b.bus.publish('quiet', { n: 1 }), await b.bus.publish('quiet', { n: 2 })];
        assert.equal(ids[0]!.split('-')[0], head.split('-')[0], 'the same epoch');
        const replay = await a.bus.readSince('quiet', head);
        assert.ok(!replay.reset);
        assert.deepEqual(replay.events.map((e) => e.id), ids);
        assert.equal(await b.bus.head('quiet'), ids[1], 'head is now the newest id, on any node');

        // b's empty epoch on another channel expires after maxAgeMs + 1 s: then a new one.
        const short = await b.bus.head('short');
        for (let tries = 0; (await target.admin().exists(`${c.prefix}bus:{short}:m`)) === 1; tries += 1) {
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
      const c = cluster(target);
      const [a, b] = [c.node('a'), c.node('b')];
      try {
        const seen: number[] = [];
        b.bus.subscribe('room', (e) => seen.push(e.event.n));
        await subscribed(b.bus, 'room');
        await a.bus.publish('room', { n: 1 });
        await until(() => seen.length === 1, 'event 1 on B');
        await target.killPubSub();
        for (let n = 2; n <= 5; n += 1) await a.bus.publish('room', { n });
        await until(() => seen.length >= 5, 'events 2..5 on B after the reconnect');
        await a.bus.publish('room', { n: 6 });
        await until(() => seen.length >= 6, 'event 6 live');
        assert.deepEqual(seen, [1, 2, 3, 4, 5, 6]);
      } finally {
        await closeAll(c.all);
      }
    });

    it("a subscription refused before its first event: what others published between this node's own events is replayed, in order", async () => {
      const c = cluster(target);
      const [a, b] = [c.node('a'), c.node('b')];
      try {
        // Both nodes' command connections open; then Redis takes no new connection, so A's
        // subscriber link cannot open: A's own events wait (held) for a subscription that
        // works, B's are heard by nobody on A.
        await a.bus.publish('other', { n: 0 });
        await b.bus.publish('other', { n: 0 });
        await target.refuseNewConnections(true);
        const seen: number[] = [];
        try {
          a.bus.subscribe('room', (e) => seen.push(e.event.n));
          for (let n = 1; n <= 5; n += 1) {
            await a.bus.publish('room', { n });
            await b.bus.publish('room', { n: 100 + n });
          }
        } finally {
          await target.refuseNewConnections(false);
        }
        await a.bus.publish('room', { n: 999 });
        await until(() => seen.at(-1) === 999, 'the last event on A');
        assert.deepEqual(seen, [1, 101, 2, 102, 3, 103, 4, 104, 5, 105, 999]);
      } finally {
        await closeAll(c.all);
      }
    });

    it('a listener whose missed events are no longer held is told (a gap), then gets the live events that follow', async () => {
      const c = cluster(target);
      const [a, b] = [c.node('a'), c.node('b')];
      try {
        const seen: number[] = [];
        let gaps = 0;
        b.bus.subscribe('room', (e) => seen.push(e.event.n), () => (gaps += 1));
        await subscribed(b.bus, 'room');
        await a.bus.publish('room', { n: 1 });
        await until(() => seen.length === 1, 'event 1 on B');
        // While B is cut off, the channel's stream is lost (as a failover to a replica that had
        // not received it would lose it) and a new epoch begins: B cannot read what it missed.
        await target.killPubSub();
        assert.equal(await target.admin().del(`${c.prefix}bus:{room}:s`), 1);
        await a.bus.publish('room', { n: 2 });
        await until(() => gaps === 1, 'the gap reported to B');
        assert.deepEqual(seen, [1], 'nothing passed over as if it followed 1');
        await a.bus.publish('room', { n: 3 });
        await until(() => seen.length === 2, 'event 3 live after the gap');
        assert.deepEqual(seen, [1, 3]);
        assert.equal(gaps, 1);
      } finally {
        await closeAll(c.all);
      }
    });
  });

  describe(`${target.name}: work queue across nodes`, () => {
    it('jobs are run exactly once across consumers on two nodes', async () => {
      const c = cluster(target);
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
        for (const shard of shards(target, c.prefix)) {
          assert.equal(await target.admin().xlen(shard.stream), 0, 'acked jobs leave the stream');
          assert.deepEqual(await target.admin().xinfo('CONSUMERS', shard.stream, 'workers').catch(() => []), [], 'stopped consumers leave the group');
        }
      } finally {
        await closeAll(c.all);
      }
    });

    it("a dead node's running job is claimed by a survivor after claimIdleMs, not before", async () => {
      const c = cluster(target);
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
        for (const shard of shards(target, c.prefix)) {
          const pending = (await target.admin().xpending(shard.stream, 'workers').catch(() => [0])) as [number, ...unknown[]];
          assert.equal(pending[0], 0, 'B acked it');
        }
      } finally {
        await closeAll(c.all);
      }
    });

    it('a failing job is retried across nodes with increasing attempts, then given up once', async () => {
      const c = cluster(target);
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
        for (const shard of shards(target, c.prefix)) {
          assert.equal(await target.admin().xlen(shard.stream), 0);
          assert.equal(await target.admin().zcard(shard.delayed), 0);
        }
      } finally {
        await closeAll(c.all);
      }
    });

    it('refuses jobs beyond maxQueuedJobs, counted across the cluster, with QueueFullError', async () => {
      const c = cluster(target);
      // Each shard holds its share (2 here); enqueues go round robin, so after a node has gone
      // round the shards every share is used, whoever filled it.
      const max = 2 * target.jobShards;
      const [a, b] = [c.node('a', { maxQueuedJobs: max }), c.node('b', { maxQueuedJobs: max })];
      try {
        let accepted = 0;
        for (let k = 0; k < 3 * target.jobShards; k += 1) {
          for (const n of [a, b]) {
            await n.bus.enqueue(`${k}`).then(
              () => (accepted += 1),
              (error: unknown) => assert.ok(error instanceof QueueFullError, String(error)),
            );
          }
        }
        assert.equal(accepted, max);
        await assert.rejects(a.bus.enqueue('late'), QueueFullError);
        await assert.rejects(b.bus.enqueue('late'), QueueFullError);
      } finally {
        await closeAll(c.all);
      }
    });

  });

  describe(`${target.name}: bus lifecycle`, () => {
    it('after close every call is refused, and close is idempotent', async () => {
      const c = cluster(target);
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
      const c = cluster(target);
      assert.throws(() => c.node('a', { window: { maxEventsPerChannel: 0 } }), RangeError);
      assert.throws(() => c.node('a', { claimIdleMs: 1.5 }), RangeError);
      assert.throws(() => c.node('a b'), RangeError);
    });
  });
}
