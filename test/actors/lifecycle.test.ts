/**
 * Actor lifecycle: passivation and re-activation, the actor bound, epoch fencing between two
 * hosts on one store file, recovery from a failed write, shutdown, and resuming a user's
 * stream from the bus.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { ActorUnavailableError } from '../../src/actors/index.ts';
import { userChannel } from '../../src/bus/index.ts';
import { ApiError } from '../../src/errors/catalog.ts';
import { StoreUnavailableError, type AppendMessageInput, type ChatStore } from '../../src/store/index.ts';
import { closeKit, create, history, openKit, rejectsWith, tempFile, text, withKit } from './helpers.ts';

describe('actor lifecycle', () => {
  it('an idle actor is passivated; the next request re-activates it and seq continues', async () => {
    await withKit(async (kit) => {
      const id = await create(kit, 'GROUP', ['ann', 'bob']);
      await kit.host.sendMessage(kit.ref(id), text('ann', 'one'));
      await kit.host.sendMessage(kit.ref(id), text('bob', 'two'));
      kit.clock.now += 500;
      assert.equal(kit.host.passivateIdle(), 0, 'not idle long enough');
      kit.clock.now += 1000;
      assert.equal(kit.host.passivateIdle(), 1);
      assert.equal(kit.host.stats().actors, 0);
      const epochBefore = (await kit.store.conversations.get(kit.ref(id), { kind: 'machine' }, 0))!.epoch;
      assert.equal((await kit.host.sendMessage(kit.ref(id), text('ann', 'three'))).message.seq, 3);
      assert.equal(kit.host.stats().activations, 1, 'created actors need no claim; the re-activation did one');
      assert.equal((await kit.store.conversations.get(kit.ref(id), { kind: 'machine' }, 0))!.epoch, epochBefore + 1);
      assert.deepEqual((await history(kit, id)).map((m) => m.seq), [1, 2, 3]);
    }, { host: { idleMs: 1000 } });
  });

  it('passivate(id) lets one conversation go once its accepted work is done', async () => {
    await withKit(async (kit) => {
      const id = await create(kit, 'GROUP', ['ann', 'bob']);
      const sends = [1, 2, 3].map((i) => kit.host.sendMessage(kit.ref(id), text('ann', `m${i}`)));
      assert.equal(await kit.host.passivate(id), true);
      assert.equal((await Promise.all(sends)).length, 3);
      assert.equal(kit.host.stats().actors, 0);
      assert.equal(await kit.host.passivate(id), false);
      assert.equal((await kit.host.sendMessage(kit.ref(id), text('ann', 'm4'))).message.seq, 4);
    });
  });

  it('past maxActors the least recently used idle actors go; they come back on demand', async () => {
    await withKit(async (kit) => {
      const ids: string[] = [];
      for (let i = 0; i < 6; i += 1) {
        ids.push(await create(kit, 'GROUP', ['ann', 'bob']));
        await kit.host.sendMessage(kit.ref(ids[i]!), text('ann', 'x'));
        assert.ok(kit.host.stats().actors <= 3);
      }
      assert.ok(kit.host.stats().passivations >= 3);
      assert.equal((await kit.host.sendMessage(kit.ref(ids[0]!), text('bob', 'y'))).message.seq, 2);
    }, { host: { maxActors: 3 } });
  });

  it('at maxActors, recency decides who goes: the actor used last stays though it was created first', async () => {
    await withKit(async (kit) => {
      const ids: string[] = [];
      for (let i = 0; i < 3; i += 1) {
        kit.clock.now += 1000;
        ids.push(await create(kit, 'GROUP', ['ann', 'bob']));
        await kit.host.sendMessage(kit.ref(ids[i]!), text('ann', 'x'));
      }
      kit.clock.now += 1000;
      await kit.host.sendMessage(kit.ref(ids[0]!), text('ann', 'again')); // the first is now the most recent
      kit.clock.now += 1000;
      const fourth = await create(kit, 'GROUP', ['ann', 'bob']);
      await kit.host.sendMessage(kit.ref(fourth), text('ann', 'x'));
      assert.ok(kit.host.stats().actors <= 3);
      assert.equal(await kit.host.passivate(ids[1]!), false, 'the least recently used went');
      assert.equal(await kit.host.passivate(ids[0]!), true, 'the recently used one was kept');
    }, { host: { maxActors: 3 } });
  });

  it('fencing: when a second host claims the conversation, the first one writes nothing and answers retryable', async () => {
    const file = tempFile();
    const a = await openKit({ file });
    const b = await openKit({ file, tenant_id: a.tenant_id });
    try {
      const id = await create(a, 'GROUP', ['ann', 'bob']);
      const recA = a.record(['bob']);
      await a.host.sendMessage(a.ref(id), text('ann', 'from a'));
      assert.equal((await b.host.sendMessage(b.ref(id), text('ann', 'from b'))).message.seq, 2, 'b claimed and continued');
      const refused = await Promise.allSettled([1, 2, 3].map((i) => a.host.sendMessage(a.ref(id), text('ann', `late ${i}`))));
      for (const r of refused) {
        assert.equal(r.status, 'rejected');
        const error = (r as PromiseRejectedResult).reason as ActorUnavailableError;
        assert.ok(error instanceof ActorUnavailableError);
        assert.deepEqual([error.code, error.status, error.retryable, error.reason], ['service_unavailable', 503, true, 'fenced']);
      }
      assert.deepEqual((await history(a, id)).map((m) => m.body), ['from a', 'from b'], 'nothing written by the fenced actor');
      assert.deepEqual(recA.typesOf('bob'), ['message.created'], 'and nothing published by it');
      assert.equal(a.host.stats().fenced, 1);
      // The fenced actor is forgotten: a later request to a activates a new one, which claims back.
      assert.equal((await a.host.sendMessage(a.ref(id), text('ann', 'a again'))).message.seq, 3);
      await rejectsWith(b.host.sendMessage(b.ref(id), text('ann', 'b late')), 'service_unavailable');
    } finally {
      await closeKit(a);
      await closeKit(b);
    }
  });

  it('a failed write fails its caller only; the actor reloads from the store and never reuses a seq', async () => {
    let failOnce = true;
    const wrapStore = (store: ChatStore): ChatStore => {
      const messages = Object.create(store.messages) as ChatStore['messages'];
      messages.append = (input: AppendMessageInput) => {
        if (input.seq === 3 && failOnce) {
          failOnce = false;
          return Promise.reject(new Error('disk I/O error'));
        }
        return store.messages.append(input);
      };
      return Object.assign(Object.create(store) as ChatStore, { messages });
    };
    await withKit(async (kit) => {
      const id = await create(kit, 'GROUP', ['ann', 'bob']);
      const rec = kit.record(['bob']);
      const results = await Promise.allSettled([1, 2, 3, 4, 5].map((i) => kit.host.sendMessage(kit.ref(id), text('ann', `m${i}`))));
      assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
      assert.match(String((results[2] as PromiseRejectedResult).reason), /disk I\/O error/);
      const next = await kit.host.sendMessage(kit.ref(id), text('ann', 'after'));
      assert.equal(next.message.seq, 6);
      // Sends already issued behind the failed one committed: seq 3 stays unused, none is reused.
      assert.deepEqual((await history(kit, id)).map((m) => m.seq), [1, 2, 4, 5, 6]);
      assert.deepEqual(rec.user('bob').filter((e) => e.type === 'message.created').map((e) => e.seq), [1, 2, 4, 5, 6]);
    }, { wrapStore });
  });

  it('a store out of reach is a retryable 503 service_unavailable (not a 500), and the actor recovers when it is back', async () => {
    let down = false;
    const wrapStore = (store: ChatStore): ChatStore => {
      const messages = Object.create(store.messages) as ChatStore['messages'];
      messages.append = (input: AppendMessageInput) => (down ? Promise.reject(new StoreUnavailableError('Cannot achieve consistency level LOCAL_QUORUM')) : store.messages.append(input));
      const conversations = Object.create(store.conversations) as ChatStore['conversations'];
      conversations.claim = (ref) => (down ? Promise.reject(new StoreUnavailableError('no host')) : store.conversations.claim(ref));
      return Object.assign(Object.create(store) as ChatStore, { messages, conversations });
    };
    await withKit(async (kit) => {
      const id = await create(kit, 'GROUP', ['ann', 'bob']);
      await kit.host.sendMessage(kit.ref(id), text('ann', 'before'));
      down = true;
      for (let i = 0; i < 2; i += 1) {
        // The first fails its append; the second its activation's claim (the hot state was dropped).
        const error = await kit.host.sendMessage(kit.ref(id), text('ann', 'during')).then(() => null, (e: unknown) => e);
        assert.ok(error instanceof ApiError && !(error instanceof ActorUnavailableError), String(error));
        assert.deepEqual([error.code, error.status, error.headers['Retry-After']], ['service_unavailable', 503, '1']);
      }
      down = false;
      await kit.host.sendMessage(kit.ref(id), text('ann', 'after'));
      assert.deepEqual((await history(kit, id)).map((m) => m.body), ['before', 'after']);
    }, { wrapStore });
  });

  it('a keyed send whose write landed but answered an error: the retry announces it once (message.created, push job)', async () => {
    let ambiguous = false;
    const wrapStore = (store: ChatStore): ChatStore => {
      const messages = Object.create(store.messages) as ChatStore['messages'];
      // As a Cassandra write timeout: the row is stored, the caller is told it may not be.
      messages.append = async (input: AppendMessageInput) => {
        const result = await store.messages.append(input);
        if (!ambiguous) return result;
        ambiguous = false;
        throw new StoreUnavailableError('Cannot achieve consistency level LOCAL_QUORUM (write timeout)');
      };
      return Object.assign(Object.create(store) as ChatStore, { messages });
    };
    await withKit(async (kit) => {
      const jobs: string[] = [];
      const stop = kit.bus.consume(async (job) => void jobs.push(job.message_id));
      const id = await create(kit, 'GROUP', ['ann', 'bob']);
      const rec = kit.record(['bob']);
      const message_id = randomUUID();
      ambiguous = true;
      await rejectsWith(kit.host.sendMessage(kit.ref(id), text('ann', 'landed', { message_id })), 'service_unavailable');
      assert.deepEqual(rec.typesOf('bob'), [], 'nothing announced for a failed write');
      const retry = await kit.host.sendMessage(kit.ref(id), text('ann', 'landed', { message_id }));
      const again = await kit.host.sendMessage(kit.ref(id), text('ann', 'landed', { message_id }));
      assert.deepEqual([retry.created, again.created, retry.message.seq], [false, false, 1]);
      assert.deepEqual(rec.user('bob').map((e) => [e.type, 'seq' in e ? e.seq : null]), [['message.created', 1]], 'announced once, by the first retry');
      await stop();
      assert.deepEqual(jobs, [message_id], 'one push job');
      assert.deepEqual((await history(kit, id)).map((m) => m.message_id), [message_id]);
    }, { wrapStore });
  });

  it('close: work already accepted completes; new requests are refused as retryable', async () => {
    await withKit(async (kit) => {
      const id = await create(kit, 'GROUP', ['ann', 'bob']);
      const inFlight = Array.from({ length: 20 }, (_, i) => kit.host.sendMessage(kit.ref(id), text('ann', `m${i}`)));
      const closing = kit.host.close();
      await rejectsWith(kit.host.sendMessage(kit.ref(id), text('ann', 'late')), 'service_unavailable');
      await closing;
      assert.equal((await Promise.all(inFlight)).length, 20);
      assert.equal((await history(kit, id)).length, 20);
      assert.equal(kit.host.stats().actors, 0);
    });
  });
});

describe('resume from the bus', () => {
  it('a user reading since an event id gets what followed, in order; beyond the window a reset', async () => {
    await withKit(async (kit) => {
      const id = await create(kit, 'GROUP', ['ann', 'bob']);
      const rec = kit.record(['bob']);
      await kit.host.sendMessage(kit.ref(id), text('ann', 'seen'));
      const lastSeen = rec.user('bob').at(-1)!.id;
      await kit.host.sendMessage(kit.ref(id), text('ann', 'missed 1'));
      await kit.host.addReaction(kit.ref(id), { message_id: (await history(kit, id))[0]!.message_id, user_id: 'ann', emoji: '❤️' });
      await kit.host.sendMessage(kit.ref(id), text('ann', 'missed 2'));
      const channel = userChannel(kit.tenant_id, 'bob');
      const missed = await kit.bus.readSince(channel, lastSeen);
      assert.ok(!missed.reset);
      assert.deepEqual(missed.events.map((e) => e.event.type), ['message.created', 'reaction.added', 'message.created']);
      assert.deepEqual(missed.events.map((e) => e.id), rec.user('bob').slice(-3).map((e) => e.id));
      for (let i = 0; i < 5; i += 1) await kit.host.sendMessage(kit.ref(id), text('ann', `more ${i}`));
      assert.deepEqual(await kit.bus.readSince(channel, lastSeen), { reset: true }, 'what followed no longer fits the window');
    }, { bus: { window: { maxEventsPerChannel: 5 } } });
  });
});
