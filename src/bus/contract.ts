/**
 * The contract every Bus driver passes, as node:test tests. A driver's test file calls
 * `busContract('<driver>', make)` once; the suite is never copied per driver.
 *
 * `make` is called once per test with the window, clock and retry policy the test needs, and
 * the bus is closed after it. Channels are unique per test, so a shared Redis needs no cleanup.
 * Time is the injected clock, never slept on; the only waits are for retries the policy makes
 * 1 ms long.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { Bus, BusEntry, ReadSinceResult, ResumeWindow, RetryPolicy } from './types.ts';

export interface TestEvent {
  n: number;
}

export interface BusContractOptions {
  window: Required<ResumeWindow>;
  /** The clock the driver must read for event ages. */
  now: () => number;
  retry: RetryPolicy;
}

export type MakeBus = (options: BusContractOptions) => Promise<Bus<TestEvent, string>>;

/**
 * What a driver's streams are made of. `sharedPositions`: positions are not per channel but
 * shared by the channels of a log (the Redis fan log): an id of one channel is a position on
 * every channel of the log, and the log keeps every event younger than the window's age (more
 * than `maxEventsPerChannel` per channel, which the contract allows). Tests of a reset for
 * another channel's id or past the count window then do not apply.
 */
export interface BusTraits {
  sharedPositions?: boolean;
}

interface Kit {
  bus: Bus<TestEvent, string>;
  channel: (label: string) => string;
  advance: (ms: number) => void;
}

const ID = /^(\d+)-(.+)$/;

/** The same position under another epoch. */
function otherEpoch(id: string): string {
  const m = ID.exec(id);
  assert.ok(m, `id ${id} has the shape <epoch>-<offset>`);
  return `${m[1]}7-${m[2]}`;
}

/** A replay without `through` (a driver's hint for the resume recipe, not part of what is compared). */
const plain = (r: ReadSinceResult<TestEvent>): ReadSinceResult<TestEvent> => (r.reset ? r : { reset: false, events: r.events });

const ns = (entries: readonly BusEntry<TestEvent>[]): number[] => entries.map((e) => e.event.n);

/** Polls until `ok` holds; fails after 5 s with `what`. */
async function until(ok: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!ok()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

export function busContract(name: string, make: MakeBus, traits: BusTraits = {}): void {
  const perChannel = traits.sharedPositions !== true;
  const test = (title: string, body: (kit: Kit) => Promise<void>, window: Partial<ResumeWindow> = {}, retry: RetryPolicy = (a) => (a < 3 ? 1 : null)): void => {
    it(title, async () => {
      let clock = 1_700_000_000_000;
      const bus = await make({ window: { maxEventsPerChannel: 100, maxAgeMs: 60_000, ...window }, now: () => clock, retry });
      const prefix = `contract:${randomUUID()}:`;
      try {
        await body({ bus, channel: (label) => prefix + label, advance: (ms) => (clock += ms) });
      } finally {
        await bus.close();
      }
    });
  };

  const publishAll = async (bus: Kit['bus'], channel: string, from: number, to: number): Promise<string[]> => {
    const ids: string[] = [];
    for (let n = from; n <= to; n += 1) ids.push(await bus.publish(channel, { n }));
    return ids;
  };

  describe(`Bus contract: ${name}`, () => {
    describe('event streams', () => {
      test('ids are <epoch>-<offset>, distinct and in publish order within a channel', async ({ bus, channel }) => {
        const ids = await publishAll(bus, channel('a'), 1, 5);
        assert.ok(ids.every((id) => ID.test(id)));
        assert.equal(new Set(ids).size, 5);
        assert.equal(new Set(ids.map((id) => ID.exec(id)![1])).size, 1, 'one epoch');
        const replay = await bus.readSince(channel('a'), ids[0]!);
        assert.ok(!replay.reset);
        assert.deepEqual(replay.events.map((e) => e.id), ids.slice(1));
      });

      test('listeners get every later event of their channel, in order, with the published id', async ({ bus, channel }) => {
        const seen: BusEntry<TestEvent>[] = [];
        const other: number[] = [];
        const off = bus.subscribe(channel('a'), (e) => seen.push(e));
        bus.subscribe(channel('b'), (e) => other.push(e.event.n));
        const ids = await Promise.all([1, 2, 3].map((n) => bus.publish(channel('a'), { n })));
        assert.deepEqual(ns(seen), [1, 2, 3]);
        assert.deepEqual(seen.map((e) => e.id), ids);
        assert.ok(seen.every((e) => e.channel === channel('a')));
        off();
        await bus.publish(channel('a'), { n: 4 });
        assert.deepEqual(ns(seen), [1, 2, 3], 'nothing after unsubscribe');
        assert.deepEqual(other, []);
      });

      test('unawaited publishes of one caller are appended in call order', async ({ bus, channel }) => {
        const seen: number[] = [];
        bus.subscribe(channel('a'), (e) => seen.push(e.event.n));
        const first = await bus.publish(channel('a'), { n: 0 });
        await Promise.all(Array.from({ length: 50 }, (_, i) => bus.publish(channel('a'), { n: i + 1 })));
        const expected = Array.from({ length: 50 }, (_, i) => i + 1);
        assert.deepEqual(seen.slice(1), expected);
        const replay = await bus.readSince(channel('a'), first);
        assert.ok(!replay.reset);
        assert.deepEqual(ns(replay.events), expected);
      });

      test('publishMany appends the event to every channel: an id per channel, listeners and readSince per channel', async ({ bus, channel }) => {
        const before = await bus.publish(channel('b'), { n: 0 });
        const seen = new Map<string, BusEntry<TestEvent>[]>();
        for (const label of ['a', 'b', 'c']) bus.subscribe(channel(label), (e) => seen.set(label, [...(seen.get(label) ?? []), e]));
        const ids = await bus.publishMany([channel('a'), channel('b'), channel('c')], { n: 1 });
        assert.equal(ids.length, 3);
        assert.ok(ids.every((id) => ID.test(id)));
        for (const [k, label] of ['a', 'b', 'c'].entries()) {
          const got = seen.get(label) ?? [];
          assert.deepEqual(got.map((e) => [e.id, e.channel, e.event.n]), [[ids[k], channel(label), 1]], `listener of ${label}`);
        }
        const replay = await bus.readSince(channel('b'), before);
        assert.ok(!replay.reset);
        assert.deepEqual(replay.events.map((e) => [e.id, e.event.n]), [[ids[1], 1]]);
        assert.deepEqual(plain(await bus.readSince(channel('c'), ids[2]!)), { reset: false, events: [] });
        assert.equal(await bus.head(channel('a')), ids[0]);
      });

      test('publish and publishMany of one caller, unawaited, are appended in call order on each channel', async ({ bus, channel }) => {
        const seen: Record<string, number[]> = { a: [], b: [] };
        bus.subscribe(channel('a'), (e) => seen.a!.push(e.event.n));
        bus.subscribe(channel('b'), (e) => seen.b!.push(e.event.n));
        const first = await bus.publishMany([channel('a'), channel('b')], { n: 0 });
        const pending: Promise<unknown>[] = [];
        for (let n = 1; n <= 30; n += 1) pending.push(n % 3 === 0 ? bus.publish(channel('a'), { n }) : bus.publishMany([channel('b'), channel('a')], { n }));
        await Promise.all(pending);
        const all = Array.from({ length: 30 }, (_, i) => i + 1);
        assert.deepEqual(seen.a, [0, ...all]);
        assert.deepEqual(seen.b, [0, ...all.filter((n) => n % 3 !== 0)]);
        const replayA = await bus.readSince(channel('a'), first[0]!);
        const replayB = await bus.readSince(channel('b'), first[1]!);
        assert.ok(!replayA.reset && !replayB.reset);
        assert.deepEqual(ns(replayA.events), all);
        assert.deepEqual(ns(replayB.events), all.filter((n) => n % 3 !== 0));
      });

      test('a throwing listener affects neither the publisher nor other listeners', async ({ bus, channel }) => {
        const seen: number[] = [];
        bus.subscribe(channel('a'), () => {
          throw new Error('listener bug');
        });
        bus.subscribe(channel('a'), (e) => seen.push(e.event.n));
        await bus.publish(channel('a'), { n: 1 });
        assert.deepEqual(seen, [1]);
      });

      test('one listener subscribed twice is two subscriptions', async ({ bus, channel }) => {
        const seen: number[] = [];
        const listener = (e: BusEntry<TestEvent>): void => void seen.push(e.event.n);
        const off1 = bus.subscribe(channel('a'), listener);
        bus.subscribe(channel('a'), listener);
        await bus.publish(channel('a'), { n: 1 });
        off1();
        await bus.publish(channel('a'), { n: 2 });
        assert.deepEqual(seen, [1, 1, 2]);
      });

      test('readSince answers what followed the id, and nothing at the head', async ({ bus, channel }) => {
        const ids = await publishAll(bus, channel('a'), 1, 10);
        await publishAll(bus, channel('b'), 1, 3);
        const mid = await bus.readSince(channel('a'), ids[3]!);
        assert.ok(!mid.reset);
        assert.deepEqual(ns(mid.events), [5, 6, 7, 8, 9, 10]);
        assert.deepEqual(mid.events.map((e) => e.id), ids.slice(4));
        assert.ok(mid.events.every((e) => e.channel === channel('a')));
        assert.deepEqual(plain(await bus.readSince(channel('a'), ids[9]!)), { reset: false, events: [] });
      });

      test('readSince resets for another epoch, a malformed id, an unknown channel, a future id', async ({ bus, channel }) => {
        const ids = await publishAll(bus, channel('a'), 1, 3);
        assert.deepEqual(await bus.readSince(channel('a'), otherEpoch(ids[0]!)), { reset: true });
        for (const bad of ['', 'garbage', '-', '12', 'x-1', `${ids[0]}-`]) {
          assert.deepEqual(await bus.readSince(channel('a'), bad), { reset: true }, `malformed ${JSON.stringify(bad)}`);
        }
        if (!perChannel) return;
        assert.deepEqual(await bus.readSince(channel('never-used'), ids[0]!), { reset: true });
        const later = await publishAll(bus, channel('b'), 1, 10);
        assert.deepEqual(await bus.readSince(channel('a'), later[9]!), { reset: true }, "another channel's later id");
      });

      test('the count window: the oldest id still answerable replays; older ones reset', async ({ bus, channel }) => {
        const ids = await publishAll(bus, channel('a'), 1, 25);
        if (!perChannel) {
          const all = await bus.readSince(channel('a'), ids[0]!);
          assert.ok(!all.reset, 'a shared log holds every event younger than the window');
          assert.deepEqual(ns(all.events), Array.from({ length: 24 }, (_, i) => i + 2));
          return;
        }
        // 10 held: 16..25. From id 15 nothing was dropped after it; from id 14, event 15 was.
        const edge = await bus.readSince(channel('a'), ids[14]!);
        assert.ok(!edge.reset);
        assert.deepEqual(ns(edge.events), [16, 17, 18, 19, 20, 21, 22, 23, 24, 25]);
        assert.deepEqual(await bus.readSince(channel('a'), ids[13]!), { reset: true });
        assert.deepEqual(await bus.readSince(channel('a'), ids[0]!), { reset: true });
      }, { maxEventsPerChannel: 10 });

      test('the age window: events older than maxAgeMs are gone, and so is resuming before them', async ({ bus, channel, advance }) => {
        const old = await publishAll(bus, channel('a'), 1, 3);
        advance(30_000);
        const fresh = await publishAll(bus, channel('a'), 4, 5);
        advance(31_000); // 1..3 are now 61 s old, 4..5 are 31 s old
        assert.deepEqual(await bus.readSince(channel('a'), old[0]!), { reset: true });
        const fromLastOld = await bus.readSince(channel('a'), old[2]!);
        assert.ok(!fromLastOld.reset, 'nothing after event 3 expired');
        assert.deepEqual(ns(fromLastOld.events), [4, 5]);
        assert.deepEqual(plain(await bus.readSince(channel('a'), fresh[1]!)), { reset: false, events: [] });
      }, { maxAgeMs: 60_000 });

      test('head of a channel without history fixes its epoch: readSince from it answers every later event', async ({ bus, channel }) => {
        const head = await bus.head(channel('a'));
        assert.ok(ID.test(head), `head ${head} has the shape <epoch>-<offset>`);
        assert.equal(await bus.head(channel('a')), head, 'asked again, the same position');
        assert.deepEqual(plain(await bus.readSince(channel('a'), head)), { reset: false, events: [] });
        const ids = await publishAll(bus, channel('a'), 1, 3);
        assert.equal(ID.exec(ids[0]!)![1], ID.exec(head)![1], 'publishes continue the epoch head fixed');
        const replay = await bus.readSince(channel('a'), head);
        assert.ok(!replay.reset, 'not a reset: nothing was lost since the head');
        assert.deepEqual(replay.events.map((e) => e.id), ids);
      });

      test('head after publishes is the newest id: readSince answers nothing, then what follows', async ({ bus, channel }) => {
        const ids = await publishAll(bus, channel('a'), 1, 3);
        const head = await bus.head(channel('a'));
        assert.equal(head, ids[2]);
        assert.deepEqual(plain(await bus.readSince(channel('a'), head)), { reset: false, events: [] });
        await publishAll(bus, channel('a'), 4, 5);
        const replay = await bus.readSince(channel('a'), head);
        assert.ok(!replay.reset);
        assert.deepEqual(ns(replay.events), [4, 5]);
      });

      test('a head taken while subscribed resumes after the last listener left a silent channel', async ({ bus, channel }) => {
        // The SSE case: a stream follows a channel that stays silent, disconnects; an event is
        // published while nobody on this bus listens; the client resumes from the head.
        const seen: number[] = [];
        const off = bus.subscribe(channel('a'), (e) => seen.push(e.event.n));
        const head = await bus.head(channel('a'));
        off();
        await bus.publish(channel('a'), { n: 1 });
        const replay = await bus.readSince(channel('a'), head);
        assert.ok(!replay.reset, 'the silent channel resumes instead of resetting');
        assert.deepEqual(ns(replay.events), [1]);
        assert.deepEqual(seen, []);
      });

      test('a head older than the window resets once events after it were dropped', async ({ bus, channel }) => {
        const head = await bus.head(channel('a'));
        await publishAll(bus, channel('a'), 1, 12);
        if (!perChannel) return; // a shared log keeps them all (see BusTraits)
        assert.deepEqual(await bus.readSince(channel('a'), head), { reset: true }, 'event 1 and 2 are gone');
      }, { maxEventsPerChannel: 10 });
    });

    describe('work queue', () => {
      test('jobs enqueued before a consumer starts are delivered once each, attempt 1', async ({ bus }) => {
        for (const job of ['a', 'b', 'c']) await bus.enqueue(job);
        const got: Array<[string, number]> = [];
        const done = deferred();
        const stop = bus.consume(async (job, { attempt }) => {
          got.push([job, attempt]);
          if (got.length === 3) done.resolve();
        });
        await done.promise;
        await stop();
        assert.deepEqual(got.sort(), [['a', 1], ['b', 1], ['c', 1]]);
      });

      test('a failed handler gets the job again with the next attempt number', async ({ bus }) => {
        const attempts: number[] = [];
        const done = deferred();
        const stop = bus.consume(async (_job, { attempt }) => {
          attempts.push(attempt);
          if (attempt < 3) throw new Error('push service 503');
          done.resolve();
        });
        await bus.enqueue('j');
        await done.promise;
        await stop();
        assert.deepEqual(attempts, [1, 2, 3]);
      }, {}, (attempt) => (attempt < 5 ? 1 : null));

      test('once the retry policy gives up, the job is not delivered again', async ({ bus }) => {
        const attempts: number[] = [];
        const second = deferred();
        const stop = bus.consume(async (_job, { attempt }) => {
          attempts.push(attempt);
          if (attempt === 2) second.resolve();
          throw new Error('always fails');
        });
        await bus.enqueue('bad');
        await second.promise;
        // The policy retried once after 1 ms, then gave up: a third delivery would come 1 ms
        // later; 50 ms is ample margin for it to show.
        await new Promise((r) => setTimeout(r, 50));
        await stop();
        assert.deepEqual(attempts, [1, 2]);
      }, {}, (attempt) => (attempt < 2 ? 1 : null));

      test('consumers share jobs within their concurrency; stop waits for running handlers', async ({ bus }) => {
        let running = 0;
        let peak = 0;
        const release = deferred();
        const handled: string[] = [];
        const handler = async (job: string): Promise<void> => {
          running += 1;
          peak = Math.max(peak, running);
          await release.promise;
          handled.push(job);
          running -= 1;
        };
        const stop1 = bus.consume(handler, { concurrency: 2 });
        const stop2 = bus.consume(handler, { concurrency: 1 });
        for (let i = 0; i < 6; i += 1) await bus.enqueue(`j${i}`);
        // A networked bus hands jobs over in its own time: wait for three to run, then give a
        // fourth the chance to start (it must not, the consumers are full).
        await until(() => running === 3, 'three jobs running');
        await new Promise((r) => setTimeout(r, 20));
        assert.equal(peak, 3, 'two consumers, 2 + 1 at once');
        const stopped = stop1();
        release.resolve();
        await stopped;
        // The second consumer takes what the first left.
        await until(() => handled.length === 6, 'every job handled');
        await stop2();
        assert.equal(new Set(handled).size, handled.length, 'no job twice');
        assert.equal(handled.length, 6);
      });
    });
  });
}
