/**
 * The fan log (src/bus/redis-fan-log.ts) across nodes, for every Redis deployment the driver runs
 * on (one server, a Redis Cluster): one entry per publishMany whatever the number of channels,
 * ids of one node resume on another, the resume recipe with `through` neither misses nor repeats
 * an event while publishes go on, entries reach the other nodes as pushes (no read per entry),
 * entries a node missed are read back from the stream, a dropped shard history is a gap, and a
 * reader whose connection was cut carries on where it was. Each test file calls it with its
 * target.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { TestEvent } from '../../src/bus/contract.ts';
import { createBus, type Bus, type BusEntry } from '../../src/bus/index.ts';
import { fanShardOf } from '../../src/bus/redis-fan-log.ts';
import { isCluster, type RedisClient, type RedisFactory } from '../../src/redis/client.ts';

export interface FanTarget {
  /** In the suite titles: `redis`, `redis cluster`. */
  name: string;
  factory(): RedisFactory;
  admin(): RedisClient;
  /** Cuts the connections whose name contains `part` (CLIENT KILL on every node); absent: not run. */
  killByName?: (part: string) => Promise<number>;
}

const SHARDS = 3;
const fanned = (channel: string): boolean => channel.startsWith('u:');

function nodes(target: FanTarget): { node: (id: string) => Bus<TestEvent, string>; prefix: string; closeAll: () => Promise<void> } {
  const prefix = `test:${randomUUID()}:`;
  const all: Bus<TestEvent, string>[] = [];
  return {
    prefix,
    node: (nodeId) => {
      const bus = createBus<TestEvent, string>({ driver: 'redis', redis: target.factory(), keyPrefix: prefix, nodeId, fan: { shards: SHARDS, fanned } });
      all.push(bus);
      return bus;
    },
    closeAll: async () => void (await Promise.all(all.map((b) => b.close()))),
  };
}

/** Nodes A and B of `c`, B following `u:1` (its events' `n` in `seen`, its gaps counted) from the shards' heads. */
async function watching(c: ReturnType<typeof nodes>): Promise<{ a: Bus<TestEvent, string>; b: Bus<TestEvent, string>; seen: number[]; gaps: () => number }> {
  const [a, b] = [c.node('a'), c.node('b')];
  const seen: number[] = [];
  let gaps = 0;
  b.subscribe(
    'u:1',
    (e) => seen.push(e.event.n),
    () => (gaps += 1),
  );
  await b.head('u:1');
  return { a, b, seen, gaps: () => gaps };
}

async function until(predicate: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Calls of a command so far, summed over the masters (INFO commandstats). */
async function calls(admin: RedisClient, command: string): Promise<number> {
  let total = 0;
  for (const node of isCluster(admin) ? admin.nodes('master') : [admin]) {
    const stats = String(await node.info('commandstats'));
    total += Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
  }
  return total;
}

export function redisFanSuite(target: FanTarget): void {
  describe(`${target.name}: fan log across nodes`, () => {
    it("one entry per publishMany whatever the number of channels; B's listeners get it, and B's ids resume on A", async () => {
      const c = nodes(target);
      const [a, b] = [c.node('a'), c.node('b')];
      try {
        const channels = Array.from({ length: 50 }, (_, i) => `u:${i}`);
        const seen = new Map<string, BusEntry<TestEvent>[]>();
        for (const ch of channels) b.subscribe(ch, (e) => seen.set(ch, [...(seen.get(ch) ?? []), e]));
        await b.head('u:0'); // B's readers know where the shards are
        for (let n = 1; n <= 20; n += 1) await a.publishMany(channels, { n }, `conversation-${n % 2}`);
        await until(() => channels.every((ch) => seen.get(ch)?.length === 20), '20 events on each of 50 channels on B');
        for (const ch of channels) {
          // In order per key; keys in different shards have no order between them.
          const got = seen.get(ch)!.map((e) => e.event.n);
          for (const key of [0, 1]) assert.deepEqual(got.filter((n) => n % 2 === key), Array.from({ length: 20 }, (_, i) => i + 1).filter((n) => n % 2 === key), ch);
        }
        const admin = target.admin();
        let entries = 0;
        for (let k = 0; k < SHARDS; k += 1) entries += Number(await admin.xlen(`${c.prefix}bus:{fan:${k}}:s`));
        assert.equal(entries, 20, 'one fan entry per message, not one per channel');
        const from = seen.get('u:7')![4]!.id;
        const replay = await a.readSince('u:7', from);
        assert.ok(!replay.reset);
        const got = replay.events.map((e) => e.event.n);
        assert.deepEqual([...got].sort((x, y) => x - y), Array.from({ length: 15 }, (_, i) => i + 6));
        for (const key of [0, 1]) {
          const ofKey = got.filter((n) => n % 2 === key);
          assert.deepEqual(ofKey, [...ofKey].sort((x, y) => x - y), `key ${key} in order (no order across keys)`);
        }
      } finally {
        await c.closeAll();
      }
    });

    it('the resume recipe on B from an id of A, while A keeps publishing: every event once, in order per key', async () => {
      const c = nodes(target);
      const [a, b] = [c.node('a'), c.node('b')];
      try {
        const onA: BusEntry<TestEvent>[] = [];
        a.subscribe('u:x', (e) => onA.push(e));
        await a.head('u:x');
        const keys = ['k0', 'k1', 'k2', 'k3'];
        const publishing = (async () => {
          for (let n = 1; n <= 400; n += 1) {
            void a.publishMany(['u:x', 'u:y'], { n }, keys[n % 4]!);
            if (n % 20 === 0) await new Promise((r) => setTimeout(r, 2));
          }
        })();
        await until(() => onA.length >= 100, '100 events on A');
        const resumeFrom = onA[99]!.id; // the client had 1..100 (in A's order)
        const had = new Set(onA.slice(0, 100).map((e) => e.event.n));
        // The recipe: subscribe first (live events held), then readSince, then the held ones.
        const held: BusEntry<TestEvent>[] = [];
        let live: BusEntry<TestEvent>[] | null = null;
        b.subscribe('u:x', (e) => (live === null ? held.push(e) : live.push(e)));
        const replay = await b.readSince('u:x', resumeFrom);
        assert.ok(!replay.reset);
        const got: number[] = replay.events.map((e) => e.event.n);
        let skip = replay.through !== undefined && held.some((e) => e.id === replay.through);
        for (const e of held) {
          if (skip) {
            if (e.id === replay.through) skip = false;
            continue;
          }
          got.push(e.event.n);
        }
        live = [];
        await publishing;
        await until(() => got.length + live!.length >= 300, 'the rest live on B');
        await new Promise((r) => setTimeout(r, 100));
        got.push(...live.map((e) => e.event.n));
        assert.equal(new Set(got).size, got.length, 'nothing twice');
        assert.deepEqual([...got].sort((x, y) => x - y), Array.from({ length: 400 }, (_, i) => i + 1).filter((n) => !had.has(n)), 'nothing missed, nothing the client had');
        for (const key of [0, 1, 2, 3]) {
          const ofKey = got.filter((n) => n % 4 === key);
          assert.deepEqual(ofKey, [...ofKey].sort((x, y) => x - y), `key k${key} in order`);
        }
      } finally {
        await c.closeAll();
      }
    });

    it('entries reach the other nodes as pushes: no stream read per entry', async () => {
      const c = nodes(target);
      const [a, b] = [c.node('a'), c.node('b')];
      try {
        const seen: number[] = [];
        b.subscribe('u:1', (e) => seen.push(e.event.n));
        await Promise.all([a.head('u:1'), b.head('u:1')]);
        const admin = target.admin();
        const before = await calls(admin, 'xread');
        for (let n = 1; n <= 200; n += 1) await a.publishMany(['u:1', 'u:2'], { n }, 'k');
        await until(() => seen.length === 200, '200 on B');
        const reads = (await calls(admin, 'xread')) - before;
        // Before, every node's blocking XREAD came back for (nearly) every entry: 400 here.
        assert.ok(reads < 20, `${reads} XREAD calls for 200 entries read by two nodes`);
        assert.deepEqual(seen, Array.from({ length: 200 }, (_, i) => i + 1));
      } finally {
        await c.closeAll();
      }
    });

    it('entries a node was not pushed are read from the stream, in batches: every event once, in order, no gap', async () => {
      const c = nodes(target);
      try {
        const { a, seen, gaps } = await watching(c);
        await a.publishMany(['u:1'], { n: 1 }, 'k');
        await until(() => seen.length === 1, 'the first event on B');
        // 1,500 entries appended behind the nodes' backs (as the script would, without the push).
        const k = fanShardOf('k', SHARDS);
        const stream = `${c.prefix}bus:{fan:${k}}:s`;
        const meta = `${c.prefix}bus:{fan:${k}}:m`;
        const admin = target.admin();
        const [epoch, last] = (await admin.hmget(meta, 'epoch', 'last')) as [string, string];
        let previous = last;
        const ms = Number(last.split('-')[0]);
        const batch = admin.pipeline();
        for (let i = 0; i < 1500; i += 1) {
          const id = `${ms}-${Number(last.split('-')[1]) + 1 + i}`;
          batch.xadd(stream, id, 'e', epoch, 'p', previous, 'm', '\nu:1\n', 'd', JSON.stringify({ n: 2 + i }));
          previous = id;
        }
        batch.hset(meta, 'last', previous);
        await batch.exec();
        // The next push does not follow what B took: B reads the 1,500 (two batches) first.
        await a.publishMany(['u:1'], { n: 1502 }, 'k');
        await until(() => seen.length === 1502, 'every event on B');
        assert.deepEqual(seen, Array.from({ length: 1502 }, (_, i) => i + 1));
        assert.equal(gaps(), 0);
      } finally {
        await c.closeAll();
      }
    });

    it("a shard whose history was dropped: listeners are told (a gap), go on with what follows, and the old ids reset", async () => {
      const c = nodes(target);
      try {
        const { a, b, seen, gaps } = await watching(c);
        const first = await a.publishMany(['u:1'], { n: 1 }, 'k');
        await until(() => seen.length === 1, 'the first event on B');
        const admin = target.admin();
        for (let k = 0; k < SHARDS; k += 1) await admin.del(`${c.prefix}bus:{fan:${k}}:s`, `${c.prefix}bus:{fan:${k}}:m`);
        await a.publishMany(['u:1'], { n: 2 }, 'k');
        await until(() => seen.length === 2, 'the event after the loss on B');
        assert.equal(gaps(), 1);
        assert.deepEqual(seen, [1, 2]);
        assert.deepEqual(await b.readSince('u:1', first[0]!), { reset: true });
      } finally {
        await c.closeAll();
      }
    });

    it('a shard whose stream alone was lost goes on in its epoch: a listener at the newest entry sees no gap, a resume from before the loss is a reset', async () => {
      const c = nodes(target);
      try {
        const { a, b, seen, gaps } = await watching(c);
        const ids: string[] = [];
        for (let n = 1; n <= 3; n += 1) ids.push((await a.publishMany(['u:1'], { n }, 'k'))[0]!);
        await until(() => seen.length === 3, 'three on B');
        await target.admin().del(`${c.prefix}bus:{fan:${fanShardOf('k', SHARDS)}}:s`);
        const after = (await a.publishMany(['u:1'], { n: 4 }, 'k'))[0]!;
        await until(() => seen.length === 4, 'the fourth on B');
        assert.deepEqual(seen, [1, 2, 3, 4]);
        assert.equal(gaps(), 0, 'nothing after the newest entry was lost');
        assert.deepEqual(await b.readSince('u:1', ids[0]!), { reset: true }, 'the second and third are gone');
        const fromNewest = await b.readSince('u:1', ids[2]!);
        assert.ok(!fromNewest.reset);
        assert.deepEqual(fromNewest.events.map((e) => e.event.n), [4]);
        assert.equal(fromNewest.events[0]!.id, after);
      } finally {
        await c.closeAll();
      }
    });

    it("ids only grow, even where the server's clock is behind the shard's newest id (its stream lost alone)", async () => {
      const c = nodes(target);
      try {
        const { a } = await watching(c);
        await a.publishMany(['u:1'], { n: 1 }, 'k');
        const k = fanShardOf('k', SHARDS);
        const stream = `${c.prefix}bus:{fan:${k}}:s`;
        const meta = `${c.prefix}bus:{fan:${k}}:m`;
        const admin = target.admin();
        const ahead = Date.now() + 3_600_000;
        await admin.del(stream);
        await admin.hset(meta, 'last', `${ahead}-5`);
        await a.publishMany(['u:1'], { n: 2 }, 'k');
        const entries = (await admin.xrange(stream, '-', '+')) as Array<[string, string[]]>;
        assert.equal(entries.length, 1, 'the entry at the clock was replaced, not kept beside');
        assert.equal(entries[0]![0], `${ahead}-6`);
        assert.equal(entries[0]![1][3], `${ahead}-5`, 'p: the newest id before it');
        assert.equal(await admin.hget(meta, 'last'), `${ahead}-6`);
      } finally {
        await c.closeAll();
      }
    });

    if (target.killByName) {
      it("a reader whose connection was cut goes on where it was: nothing missed, no gap", async () => {
        const c = nodes(target);
        try {
          const { a, seen, gaps } = await watching(c);
          for (let n = 1; n <= 5; n += 1) await a.publishMany(['u:1', 'u:2'], { n }, 'k');
          await until(() => seen.length === 5, 'five on B');
          assert.ok((await target.killByName!('b:fan:')) >= 1, 'a reader connection of B was cut');
          for (let n = 6; n <= 10; n += 1) await a.publishMany(['u:1', 'u:2'], { n }, 'k');
          await until(() => seen.length === 10, 'ten on B');
          assert.deepEqual(seen, Array.from({ length: 10 }, (_, i) => i + 1));
          assert.equal(gaps(), 0);
        } finally {
          await c.closeAll();
        }
      });
    }
  });
}
