/**
 * The bus contract against the in-process driver, and what only that driver promises: the total
 * byte bound, dropping idle channels (with a new epoch) only maxAgeMs after they were last touched, a new epoch after a restart, the queue
 * bound, the hooks, and close.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { busContract, type TestEvent } from '../../src/bus/contract.ts';
import { createBus, BusClosedError, QueueFullError, type Bus, type LocalBusConfig } from '../../src/bus/index.ts';
import { LocalBus } from '../../src/bus/local-bus.ts';
import { conversationChannel, parseChannel, userChannel } from '../../src/bus/channels.ts';

busContract('local', async ({ window, now, retry }) => createBus<TestEvent, string>({ driver: 'local', window, now, retry }));

function local(config: Omit<LocalBusConfig, 'driver'> = {}): LocalBus<TestEvent, string> {
  return new LocalBus<TestEvent, string>({ driver: 'local', ...config });
}

async function closing<B extends Bus<TestEvent, string>>(bus: B, body: (bus: B) => Promise<void>): Promise<void> {
  try {
    await body(bus);
  } finally {
    await bus.close();
  }
}

describe('local bus', () => {
  it('keeps total bytes under the bound by evicting the oldest events of any channel', async () => {
    // Each event is charged 64 + 7 bytes ({"n":1}); a 700-byte bound holds 9 of them.
    await closing(local({ maxTotalBytes: 700 }), async (bus) => {
      const a = [await bus.publish('a', { n: 1 }), await bus.publish('a', { n: 2 })];
      const b: string[] = [];
      for (let n = 1; n <= 9; n += 1) b.push(await bus.publish('b', { n }));
      // 11 published, 9 fit: a1 and a2, the oldest of all, went first.
      assert.equal(bus.stats().events, 9);
      assert.ok(bus.stats().bytes <= 700);
      assert.deepEqual(await bus.readSince('a', a[0]!), { reset: true }, 'a2 was lost');
      assert.deepEqual(await bus.readSince('a', a[1]!), { reset: false, events: [] }, 'nothing after a2 was lost');
      const fromB1 = await bus.readSince('b', b[0]!);
      assert.ok(!fromB1.reset);
      assert.deepEqual(fromB1.events.map((e) => e.event.n), [2, 3, 4, 5, 6, 7, 8, 9]);
    });
  });

  it('holds events as JSON: listeners get the object published, readSince equal copies, bytes from the JSON', async () => {
    await closing(local(), async (bus) => {
      const seen: unknown[] = [];
      bus.subscribe('a', (entry) => seen.push(entry.event));
      const event = { n: 1, text: 'héllo ✓', nested: { list: [1, null, 'x'] } } as unknown as TestEvent;
      const id = await bus.publish('a', event);
      await bus.publish('b', event); // one event, two channels: packed once, charged twice
      assert.equal(seen[0], event, 'a listener gets the published object itself');
      const replay = await bus.readSince('a', (await bus.head('a')).replace(/-\d+$/, '-0'));
      assert.ok(!replay.reset);
      assert.equal(replay.events[0]!.id, id);
      assert.deepEqual(replay.events[0]!.event, event, 'readSince answers an equal event');
      assert.notEqual(replay.events[0]!.event, event, '... parsed from the held JSON, not the object');
      const json = Buffer.byteLength(JSON.stringify(event));
      assert.equal(bus.stats().bytes, 2 * (64 + json), 'each entry charged its JSON bytes and the entry overhead');
    });
  });

  // 3 per channel: the ring's space is what evicts (dead bytes of busy channels wrap onto a quiet
  // channel's event); 12: the byte bound is what evicts.
  for (const perChannel of [3, 12]) it(`a small window that wraps many times answers only exact events or a reset (randomized against a model, ${perChannel} per channel)`, async () => {
    let seed = 7;
    const rand = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2147483648) % n);
    await closing(local({ maxTotalBytes: 3000, window: { maxEventsPerChannel: perChannel } }), async (bus) => {
      const model = new Map<string, Array<{ id: string; event: TestEvent }>>();
      // A quiet channel: its one event stays held by every bound but the ring's own space.
      const quietHead = await bus.head('quiet');
      const quiet = { n: -1, pad: 'q'.repeat(50) } as unknown as TestEvent;
      const quietId = await bus.publish('quiet', quiet);
      for (let k = 0; k < 1500; k += 1) {
        const event = { n: k, pad: 'x'.repeat(rand(200)) } as unknown as TestEvent;
        // Sometimes one event goes to several channels, as a GROUP message does.
        const channels = rand(4) === 0 ? ['a', 'b', 'c'] : [['a', 'b', 'c', 'd'][rand(4)]!];
        for (const ch of channels) {
          const id = await bus.publish(ch, event);
          model.set(ch, [...(model.get(ch) ?? []), { id, event }]);
        }
        if (k % 25 !== 0) continue;
        for (const [ch, published] of model) {
          for (const from of [published.length - 1, published.length - 3, published.length - 15, 0]) {
            if (from < 0) continue;
            const r = await bus.readSince(ch, published[from]!.id);
            if (r.reset) continue;
            assert.deepEqual(r.events.map((e) => ({ id: e.id, event: e.event })), published.slice(from + 1), `${ch} after #${from}`);
          }
          const last = published[published.length - 1]!;
          assert.deepEqual(await bus.readSince(ch, last.id), { reset: false, events: [] }, 'the newest id always resumes');
        }
      }
      const q = await bus.readSince('quiet', quietHead);
      assert.ok(q.reset || (q.events.length === 1 && q.events[0]!.id === quietId && JSON.stringify(q.events[0]!.event) === JSON.stringify(quiet)), 'the quiet channel answers its event intact or a reset');
      assert.ok(bus.stats().bytes <= 3000);
    });
  });

  it('the byte ring grows to the bound without losing what it holds, then wraps', async () => {
    await closing(local({ maxTotalBytes: 4 * 1024 * 1024, window: { maxEventsPerChannel: 100_000 } }), async (bus) => {
      const head = await bus.head('a');
      const published: Array<{ id: string; event: TestEvent }> = [];
      // ~3 MiB: the ring starts at 1 MiB and doubles twice.
      for (let n = 0; n < 3000; n += 1) {
        const event = { n, pad: String(n).repeat(1000 / String(n).length) } as unknown as TestEvent;
        published.push({ id: await bus.publish('a', event), event });
      }
      const all = await bus.readSince('a', head);
      assert.ok(!all.reset);
      assert.deepEqual(all.events.map((e) => ({ id: e.id, event: e.event })), published);
      // ~3 MiB more: the ring wraps; the oldest go, the newest are intact.
      for (let n = 3000; n < 6000; n += 1) {
        const event = { n, pad: String(n).repeat(1000 / String(n).length) } as unknown as TestEvent;
        published.push({ id: await bus.publish('a', event), event });
      }
      assert.deepEqual(await bus.readSince('a', head), { reset: true });
      const from = published.length - 2000;
      const tail = await bus.readSince('a', published[from]!.id);
      assert.ok(!tail.reset);
      assert.deepEqual(tail.events.map((e) => ({ id: e.id, event: e.event })), published.slice(from + 1));
    });
  });

  it('its bookkeeping stays proportional to what it holds, however long it runs', async () => {
    // Evictions by the ring and the byte bound move the FIFO's head; the consumed part must go too.
    for (const window of [{ maxEventsPerChannel: 1 }, { maxEventsPerChannel: 1000 }]) {
      await closing(local({ maxTotalBytes: 20_000, window }), async (bus) => {
        for (let n = 0; n < 50_000; n += 1) await bus.publish(`u${n % 5}`, { n, pad: 'z'.repeat(40) } as unknown as TestEvent);
        const fifo = (bus as unknown as { streams: { fifo: { length: number } } }).streams.fifo;
        assert.ok(fifo.length < 5000, `FIFO of ${fifo.length} entries for ${bus.stats().events} held`);
      });
    }
  });

  it('an event larger than the whole window is delivered live, and nothing resumes across it', async () => {
    await closing(local({ maxTotalBytes: 500 }), async (bus) => {
      const seen: unknown[] = [];
      bus.subscribe('a', (e) => seen.push(e.event));
      const first = await bus.publish('a', { n: 1 });
      const big = { n: 2, pad: 'y'.repeat(1000) } as unknown as TestEvent;
      const bigId = await bus.publish('a', big);
      const third = await bus.publish('a', { n: 3 });
      assert.deepEqual(seen.map((e) => (e as TestEvent).n), [1, 2, 3]);
      assert.deepEqual(await bus.readSince('a', first), { reset: true }, 'the big event cannot be replayed');
      const after = await bus.readSince('a', bigId);
      assert.ok(!after.reset);
      assert.deepEqual(after.events.map((e) => e.id), [third]);
    });
  });

  it('an idle channel is dropped; published to again, it starts a new epoch and old ids reset', async () => {
    let clock = 0;
    await closing(local({ window: { maxAgeMs: 1000 }, now: () => clock }), async (bus) => {
      const first = await bus.publish('a', { n: 1 });
      clock += 2000;
      (bus as unknown as { streams: { sweep(): void } }).streams.sweep();
      assert.equal(bus.stats().channels, 0);
      const second = await bus.publish('a', { n: 2 });
      assert.notEqual(first.split('-')[0], second.split('-')[0]);
      assert.deepEqual(await bus.readSince('a', first), { reset: true });
    });
  });

  it('a channel with a listener keeps its epoch even with nothing held', async () => {
    let clock = 0;
    await closing(local({ window: { maxAgeMs: 1000 }, now: () => clock }), async (bus) => {
      bus.subscribe('a', () => {});
      const first = await bus.publish('a', { n: 1 });
      clock += 2000;
      (bus as unknown as { streams: { sweep(): void } }).streams.sweep();
      const second = await bus.publish('a', { n: 2 });
      assert.equal(first.split('-')[0], second.split('-')[0]);
      assert.equal(second.split('-')[1], '2', 'offsets continue');
      const replay = await bus.readSince('a', first);
      assert.ok(!replay.reset, 'event 1 expired, but nothing after it was lost');
      assert.deepEqual(replay.events.map((e) => e.id), [second]);
    });
  });

  it('an empty log stays maxAgeMs after it was last touched (its head resumes), then the sweep drops it', async () => {
    let clock = 0;
    await closing(local({ window: { maxAgeMs: 1000 }, now: () => clock }), async (bus) => {
      const sweep = (): void => (bus as unknown as { streams: { sweep(): void } }).streams.sweep();
      const off = bus.subscribe('a', () => {});
      const head = await bus.head('a');
      assert.match(head, /^\d+-0$/);
      clock += 5000;
      off(); // touched now
      clock += 999;
      sweep();
      assert.equal(bus.stats().channels, 1, 'kept: left 999 ms ago');
      const id = await bus.publish('a', { n: 1 });
      assert.equal(id.split('-')[0], head.split('-')[0]);
      assert.deepEqual(await bus.readSince('a', head), { reset: false, events: [{ id, channel: 'a', event: { n: 1 }, json: '{"n":1}' }] });
      clock += 2000;
      sweep();
      assert.equal(bus.stats().channels, 0, 'dropped once idle for maxAgeMs');
    });
  });

  it('a restarted bus answers reset to the ids of the previous one', async () => {
    const before = local();
    const id = await before.publish('a', { n: 1 });
    await before.close();
    await closing(local(), async (after) => {
      await after.publish('a', { n: 1 });
      assert.deepEqual(await after.readSince('a', id), { reset: true });
    });
  });

  it('refuses jobs beyond maxQueuedJobs with QueueFullError', async () => {
    await closing(local({ maxQueuedJobs: 2 }), async (bus) => {
      await bus.enqueue('a');
      await bus.enqueue('b');
      await assert.rejects(bus.enqueue('c'), QueueFullError);
    });
  });

  it('reports listener errors and given-up jobs to the hooks', async () => {
    const listenerErrors: string[] = [];
    const givenUp: unknown[] = [];
    let gaveUp!: () => void;
    const done = new Promise<void>((r) => (gaveUp = r));
    const bus = local({
      onListenerError: (error, channel) => listenerErrors.push(`${channel}: ${(error as Error).message}`),
      onGiveUp: (job) => {
        givenUp.push(job);
        gaveUp();
      },
      retry: () => null,
    });
    await closing(bus, async () => {
      bus.subscribe('a', () => {
        throw new Error('boom');
      });
      await bus.publish('a', { n: 1 });
      assert.deepEqual(listenerErrors, ['a: boom']);
      bus.consume(async () => {
        throw new Error('nope');
      });
      await bus.enqueue('job-1');
      await done;
      assert.deepEqual(givenUp, ['job-1']);
    });
  });

  it('after close every call is refused', async () => {
    const bus = local();
    await bus.close();
    await bus.close();
    await assert.rejects(bus.publish('a', { n: 1 }), BusClosedError);
    await assert.rejects(bus.readSince('a', '1-1'), BusClosedError);
    await assert.rejects(bus.enqueue('j'), BusClosedError);
    assert.throws(() => bus.subscribe('a', () => {}), BusClosedError);
  });

  it('drainJobs delivers what is queued before a stop, and answers what the deadline left', async () => {
    const bus = local({ retry: (attempt) => (attempt < 2 ? 60_000 : null) });
    try {
      const done: string[] = [];
      bus.consume(
        async (job) => {
          await new Promise((resolve) => setTimeout(resolve, 20));
          if (job === 'flaky') throw new Error('push service down');
          done.push(job);
        },
        { concurrency: 2 },
      );
      for (const job of ['a', 'b', 'c', 'flaky']) await bus.enqueue(job);
      assert.equal(await bus.drainJobs(Date.now() + 5_000), 1, 'only the job waiting a minute for its retry is left');
      assert.deepEqual(done.sort(), ['a', 'b', 'c']);

      const slow = ['s1', 's2', 's3', 's4', 's5', 's6'];
      for (const job of slow) await bus.enqueue(job);
      assert.equal(await bus.drainJobs(Date.now()), 7, 'a deadline already passed: 2 running, 4 ready, 1 waiting for its retry');
    } finally {
      await bus.close();
    }
    assert.equal(bus.stats().jobs, 0, 'close() drops what is left');
  });

  it('refuses a configuration out of range', () => {
    assert.throws(() => local({ window: { maxEventsPerChannel: 0 } }), RangeError);
    assert.throws(() => local({ maxTotalBytes: 1.5 }), RangeError);
  });
});

describe('channel names', () => {
  it('encode each part, so ids containing ":" never collide, and parse back', () => {
    assert.equal(userChannel('t1', 'u1'), 'user:t1:u1');
    assert.notEqual(userChannel('a:b', 'c'), userChannel('a', 'b:c'));
    assert.deepEqual(parseChannel(userChannel('a:b', 'c%')), { kind: 'user', tenant_id: 'a:b', user_id: 'c%' });
    const conv = conversationChannel('t', 'app', '00000000-0000-4000-8000-000000000000');
    assert.deepEqual(parseChannel(conv), { kind: 'conversation', tenant_id: 't', application_id: 'app', conversation_id: '00000000-0000-4000-8000-000000000000' });
    assert.equal(parseChannel('user:%E0%A4%A:x'), null);
    assert.equal(parseChannel('other:x'), null);
  });
});
