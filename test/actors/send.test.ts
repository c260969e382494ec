/**
 * Sending through conversation actors on a real SQLite store and local bus: ordering under
 * concurrency, group commit across conversations, idempotency, the send rules and push jobs.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { PushJob } from '../../src/actors/index.ts';
import { createPresence, type Presence } from '../../src/presence/index.ts';
import { create, history, rejectsWith, text, withKit } from './helpers.ts';

describe('sending', () => {
  it('parallel sends to one conversation: all acknowledged, seq 1..N once each, events in seq order', async () => {
    await withKit(async (kit) => {
      const id = await create(kit, 'GROUP', ['ann', 'bob']);
      const rec = kit.record(['ann', 'bob']);
      const N = 300;
      const before = kit.store.stats();
      const results = await Promise.all(Array.from({ length: N }, (_, i) => kit.host.sendMessage(kit.ref(id), text(i % 2 ? 'ann' : 'bob', `m${i}`))));
      const seqs = results.map((r) => r.message.seq).sort((a, b) => a - b);
      assert.deepEqual(seqs, Array.from({ length: N }, (_, i) => i + 1));
      assert.ok(results.every((r) => r.created));
      // Arrival order is the order of the calls: the i-th call got seq i+1.
      assert.deepEqual(results.map((r) => r.message.body), Array.from({ length: N }, (_, i) => `m${i}`));
      assert.deepEqual(results.map((r) => r.message.seq), seqs);
      const stored = await history(kit, id);
      assert.deepEqual(stored.map((m) => m.seq), seqs);
      assert.deepEqual(new Set(stored.map((m) => m.message_id)), new Set(results.map((r) => r.message.message_id)));
      for (const user of ['ann', 'bob']) {
        const created = rec.user(user).filter((e) => e.type === 'message.created');
        assert.deepEqual(created.map((e) => e.seq), seqs, `${user} got every message.created in seq order`);
      }
      // Pipelining: the burst shared commits instead of one transaction per message.
      const after = kit.store.stats();
      assert.ok(after.transactions - before.transactions < N / 4, `${after.transactions - before.transactions} transactions for ${N} sends`);
    });
  });

  it('parallel sends across many conversations overlap in the group commit, each numbered 1..n', async () => {
    await withKit(async (kit) => {
      const ids = await Promise.all(Array.from({ length: 40 }, (_, i) => create(kit, 'GROUP', [`owner${i}`, 'bob'])));
      const before = kit.store.stats();
      const sends = ids.flatMap((id, i) => Array.from({ length: 10 }, (_, j) => kit.host.sendMessage(kit.ref(id), text(j % 2 ? `owner${i}` : 'bob', `c${i} m${j}`))));
      await Promise.all(sends);
      const after = kit.store.stats();
      assert.ok(after.largestBatch >= 40, `largest batch ${after.largestBatch}: writes of different conversations were committed together`);
      assert.ok(after.transactions - before.transactions < 40, 'fewer transactions than conversations');
      for (const id of ids) assert.deepEqual((await history(kit, id)).map((m) => m.seq), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    });
  });

  it('a send with a known message_id answers the original: once stored, once while in flight', async () => {
    await withKit(async (kit) => {
      const id = await create(kit, 'GROUP', ['ann', 'bob']);
      const rec = kit.record(['bob']);
      const message_id = randomUUID();
      const [first, concurrent] = await Promise.all([
        kit.host.sendMessage(kit.ref(id), text('ann', 'hello', { message_id })),
        kit.host.sendMessage(kit.ref(id), text('ann', 'hello', { message_id })),
      ]);
      const later = await kit.host.sendMessage(kit.ref(id), text('ann', 'hello', { message_id }));
      assert.deepEqual([first.created, concurrent.created, later.created], [true, false, false]);
      assert.equal(concurrent.message.message_id, message_id);
      assert.equal(later.message.seq, 1);
      assert.equal((await history(kit, id)).length, 1);
      assert.deepEqual(rec.typesOf('bob'), ['message.created'], 'one event');
      const next = await kit.host.sendMessage(kit.ref(id), text('ann', 'next'));
      assert.equal(next.message.seq, 2, 'no seq was spent on the retries');
    });
  });

  it('answers the message with the sender profile, mentions kept (deduplicated)', async () => {
    await withKit(async (kit) => {
      await kit.store.profiles.upsert(kit.tenant_id, [{ user_id: 'ann', display_name: 'Ann A.', avatar_url: 'https://img/ann' }], 'idp');
      const id = await create(kit, 'GROUP', ['ann', 'bob']);
      const rec = kit.record(['bob']);
      const { message } = await kit.host.sendMessage(kit.ref(id), text('ann', 'hi @bob', { mentioned_user_ids: ['bob', 'bob', 'carl'] }));
      assert.deepEqual(message.sender, { user_id: 'ann', display_name: 'Ann A.', avatar_url: 'https://img/ann' });
      assert.deepEqual(message.mentioned_user_ids, ['bob', 'carl']);
      assert.deepEqual(message.reactions, []);
      const event = rec.user('bob')[0]!;
      assert.equal(event.type, 'message.created');
      assert.ok(event.type === 'message.created');
      assert.deepEqual(event.data.message.sender, { user_id: 'ann', display_name: 'Ann A.', avatar_url: 'https://img/ann' });
      assert.equal(event.data.message.body, 'hi @bob');
      assert.equal(event.seq, 1);
      assert.equal(event.occurred_at, message.created_at);
    });
  });

  it('refuses senders who are not ACTIVE members: users not_conversation_member, machines actor_not_member', async () => {
    await withKit(async (kit) => {
      const id = await create(kit, 'GROUP', ['ann', 'bob']);
      await rejectsWith(kit.host.sendMessage(kit.ref(id), text('mallory', 'x')), 'not_conversation_member');
      await rejectsWith(kit.host.sendMessage(kit.ref(id), { ...text('mallory', 'x'), sender_client_id: 'backend' }), 'actor_not_member');
      await kit.host.leave(kit.ref(id), 'bob');
      await rejectsWith(kit.host.sendMessage(kit.ref(id), text('bob', 'x')), 'not_conversation_member');
      const system = await kit.host.sendMessage(kit.ref(id), { sender_user_id: null, sender_client_id: 'backend', body: 'maintenance', message_type: 'SYSTEM' });
      assert.equal(system.message.sender, null);
      assert.equal(system.message.seq, 1, 'refused sends spent no seq');
    });
  });

  it('refuses sends to an archived conversation and to one that does not exist here', async () => {
    await withKit(async (kit) => {
      const id = await create(kit, 'GROUP', ['ann', 'bob']);
      await kit.host.archive(kit.ref(id), { user_id: 'ann', client_id: null });
      await rejectsWith(kit.host.sendMessage(kit.ref(id), text('ann', 'x')), 'conversation_archived');
      await kit.host.unarchive(kit.ref(id), { user_id: 'ann', client_id: null });
      assert.equal((await kit.host.sendMessage(kit.ref(id), text('ann', 'back'))).message.seq, 1);
      await rejectsWith(kit.host.sendMessage(kit.ref(randomUUID()), text('ann', 'x')), 'not_found');
      await rejectsWith(kit.host.sendMessage({ ...kit.ref(id), application_id: 'other-app' }, text('ann', 'x')), 'not_found');
      await rejectsWith(kit.host.sendMessage({ ...kit.ref(id), tenant_id: 'other-tenant' }, text('ann', 'x')), 'not_found');
    });
  });

  it('validates reply targets: this conversation, not deleted; a message still in flight counts', async () => {
    await withKit(async (kit) => {
      const id = await create(kit, 'GROUP', ['ann', 'bob']);
      const other = await create(kit, 'GROUP', ['ann', 'bob']);
      const elsewhere = await kit.host.sendMessage(kit.ref(other), text('ann', 'elsewhere'));
      const target = await kit.host.sendMessage(kit.ref(id), text('ann', 'target'));
      const reply = await kit.host.sendMessage(kit.ref(id), text('bob', 'reply', { reply_to_message_id: target.message.message_id }));
      assert.equal(reply.message.reply_to_message_id, target.message.message_id);
      await rejectsWith(kit.host.sendMessage(kit.ref(id), text('bob', 'x', { reply_to_message_id: randomUUID() })), 'invalid_reply');
      await rejectsWith(kit.host.sendMessage(kit.ref(id), text('bob', 'x', { reply_to_message_id: elsewhere.message.message_id })), 'invalid_reply');
      await kit.host.deleteMessage(kit.ref(id), { message_id: target.message.message_id, by: { user_id: 'ann', client_id: null }, scope: 'own' });
      await rejectsWith(kit.host.sendMessage(kit.ref(id), text('bob', 'x', { reply_to_message_id: target.message.message_id })), 'invalid_reply');
      const message_id = randomUUID();
      const [first, second] = await Promise.all([
        kit.host.sendMessage(kit.ref(id), text('ann', 'first', { message_id })),
        kit.host.sendMessage(kit.ref(id), text('bob', 'reply to in-flight', { reply_to_message_id: message_id })),
      ]);
      assert.equal(second.message.reply_to_message_id, first.message.message_id);
    });
  });

  it('enqueues one push job per new message, none for retries or other mutations', async () => {
    await withKit(async (kit) => {
      const jobs: PushJob[] = [];
      const stop = kit.bus.consume(async (job) => void jobs.push(job));
      const id = await create(kit, 'CHANNEL', ['ann', 'bob']);
      const message_id = randomUUID();
      const sent = await kit.host.sendMessage(kit.ref(id), text('ann', 'one', { message_id, mentioned_user_ids: ['bob'] }));
      await kit.host.sendMessage(kit.ref(id), text('ann', 'one', { message_id, mentioned_user_ids: ['bob'] }));
      await kit.host.editMessage(kit.ref(id), { message_id, body: 'edited', by: { user_id: 'ann', client_id: null }, scope: 'own' });
      await kit.host.addReaction(kit.ref(id), { message_id, user_id: 'bob', emoji: '👍' });
      await stop();
      // CHANNEL candidates (mentioned members) are left to the worker, which checks them in the
      // store; the send time fixes which devices the message may reach.
      assert.deepEqual(jobs, [{ tenant_id: kit.tenant_id, application_id: kit.application_id, conversation_id: id, message_id, sent_at: sent.message.created_at }]);
    });
  });

  it('push jobs carry the candidates the actor holds; a CHANNEL message without mentions pushes nobody', async () => {
    await withKit(async (kit) => {
      const jobs: PushJob[] = [];
      const stop = kit.bus.consume(async (job) => void jobs.push(job));
      const group = await create(kit, 'GROUP', ['ann', 'bob', 'cid']);
      const channel = await create(kit, 'CHANNEL', ['ann', 'bob']);
      const sent = await kit.host.sendMessage(kit.ref(group), text('ann', 'hello'));
      await kit.host.sendMessage(kit.ref(channel), text('ann', 'nobody mentioned'));
      await stop();
      assert.equal(jobs.length, 1);
      assert.equal(jobs[0]!.message_id, sent.message.message_id);
      assert.deepEqual([...jobs[0]!.candidates!].sort(), ['bob', 'cid']);
    });
  });

  it('with presence, a GROUP message whose candidates are all online makes no push job; otherwise the job carries every candidate', async () => {
    const presence = createPresence({ driver: 'memory', windowMs: 60_000 });
    await withKit(async (kit) => {
      const jobs: PushJob[] = [];
      const stop = kit.bus.consume(async (job) => void jobs.push(job));
      const group = await create(kit, 'GROUP', ['ann', 'bob', 'cid', 'dee']);
      for (const u of ['bob', 'cid']) await presence.heartbeat(kit.tenant_id, u, kit.clock.now);
      const some = await kit.host.sendMessage(kit.ref(group), text('ann', 'dee is away'));
      await presence.heartbeat(kit.tenant_id, 'dee', kit.clock.now);
      await kit.host.sendMessage(kit.ref(group), text('ann', 'everyone is here'));
      const last = await kit.host.sendMessage(kit.ref(group), text('dee', 'ann has no heartbeat'));
      await new Promise((r) => setImmediate(r));
      await stop();
      assert.deepEqual(
        jobs.map((j) => [j.message_id, [...j.candidates!].sort()]),
        [
          [some.message.message_id, ['bob', 'cid', 'dee']],
          [last.message.message_id, ['ann', 'bob', 'cid']],
        ],
      );
      assert.equal(kit.host.stats().pushJobsSkippedOnline, 1);
    }, { host: { presence } });
    await presence.close();
  });

  it('with presence that cannot answer, the job goes with every candidate', async () => {
    const failing: Presence = { driver: 'memory', windowMs: 60_000, heartbeat: async () => {}, statuses: () => Promise.reject(new Error('presence down')), close: async () => {} };
    await withKit(async (kit) => {
      const jobs: PushJob[] = [];
      const stop = kit.bus.consume(async (job) => void jobs.push(job));
      const group = await create(kit, 'GROUP', ['ann', 'bob', 'cid']);
      await kit.host.sendMessage(kit.ref(group), text('ann', 'hello'));
      await new Promise((r) => setImmediate(r));
      await stop();
      assert.equal(jobs.length, 1);
      assert.deepEqual([...jobs[0]!.candidates!].sort(), ['bob', 'cid']);
    }, { host: { presence: failing } });
  });

  it('a full push queue never fails a send; the drop is counted', async () => {
    await withKit(async (kit) => {
      const id = await create(kit, 'GROUP', ['ann', 'bob']);
      for (let i = 0; i < 3; i += 1) await kit.host.sendMessage(kit.ref(id), text('ann', `m${i}`));
      assert.equal(kit.host.stats().pushJobsDropped, 1);
    }, { bus: { maxQueuedJobs: 2 } });
  });
});
