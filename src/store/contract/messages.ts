/** Contract: appending, editing, tombstoning, reading and expiring messages. */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe } from 'node:test';
import { IdConflictError, InvalidPositionError, SeqConflictError } from '../errors.ts';
import type { MessagePosition } from '../types.ts';
import { createConversation, messageInput, ref, send, storeTest, w, type MakeStore, type TestKit } from './fixtures.ts';
import type { ConversationRecord } from '../records.ts';

async function history(kit: TestKit, conv: ConversationRecord, limit: number): Promise<number[]> {
  const seqs: number[] = [];
  let after: MessagePosition | null = null;
  for (;;) {
    const page = await kit.store.messages.list({ ...ref(conv), viewer_user_id: null, limit, after });
    assert.ok(page);
    seqs.push(...page.items.map((m) => m.seq));
    if (!page.next) return seqs;
    assert.equal(page.items.length, limit);
    after = page.next;
  }
}

export function messageContract(make: MakeStore): void {
  const test = storeTest(make);

  describe('messages', () => {
    test('append stores every field and advances the conversation', async (kit) => {
      const conv = await createConversation(kit, ['ann', 'bob'], { at: kit.at(1) });
      const at = kit.at(5);
      const attachments = [{ file_id: 'f1', name: 'a.pdf', mime_type: 'application/pdf', size: 1234, url: null }];
      const input = messageInput(conv, 1, 'ann', { at, body: 'héllo 👋', message_type: 'FILE', attachments, mentioned_user_ids: ['bob'], sender_client_id: 'svc' });
      const result = await kit.store.messages.append(input);
      assert.equal(result?.created, true);
      assert.deepEqual(result?.message, {
        message_id: input.message_id, conversation_id: conv.conversation_id, tenant_id: conv.tenant_id, application_id: conv.application_id,
        seq: 1, sender_user_id: 'ann', sender_client_id: 'svc', body: 'héllo 👋', message_type: 'FILE', reply_to_message_id: null,
        attachments, mentioned_user_ids: ['bob'], status: 'ACTIVE', edited_at: null, deleted_at: null, created_at: at, updated_at: at,
      });
      const got = await kit.store.conversations.get(ref(conv), { kind: 'machine' }, 0);
      assert.equal(got?.last_seq, 1);
      assert.equal(got?.last_activity_at, at);
      const reply = await send(kit, conv, 2, 'bob', { reply_to_message_id: input.message_id });
      assert.equal(reply.reply_to_message_id, input.message_id);
    });

    test('a retried append answers the stored message and writes nothing', async (kit) => {
      const conv = await createConversation(kit, ['ann']);
      const input = messageInput(conv, 1, 'ann', { at: kit.tick() });
      const first = await kit.store.messages.append(input);
      const again = await kit.store.messages.append({ ...input, body: 'changed', at: kit.tick() });
      assert.equal(again?.created, false);
      assert.deepEqual(again?.message, first?.message);
      assert.deepEqual(await history(kit, conv, 10), [1]);
    });

    test('an append of a retryable id (an Idempotency-Key) stored before answers it, whatever seq the retry brings', async (kit) => {
      const conv = await createConversation(kit, ['ann']);
      const input = messageInput(conv, 1, 'ann', { at: kit.tick(), retryable_id: true });
      const first = await kit.store.messages.append(input);
      assert.equal(first?.created, true);
      const again = await kit.store.messages.append({ ...input, seq: 2, at: kit.tick() });
      assert.equal(again?.created, false);
      assert.deepEqual(again?.message, first?.message);
      assert.deepEqual(await history(kit, conv, 10), [1]);
    });

    test('a taken seq is SeqConflictError; a message id of another conversation IdConflictError', async (kit) => {
      const conv = await createConversation(kit, ['ann']);
      const other = await createConversation(kit, ['ann']);
      const first = await send(kit, conv, 1, 'ann');
      await assert.rejects(kit.store.messages.append(messageInput(conv, 1, 'ann')), SeqConflictError);
      await assert.rejects(kit.store.messages.append(messageInput(other, 1, 'ann', { message_id: first.message_id })), IdConflictError);
      assert.deepEqual(await history(kit, other, 10), []);
    });

    test('append to a missing or deleted conversation answers null', async (kit) => {
      const conv = await createConversation(kit, ['ann']);
      assert.equal(await kit.store.messages.append(messageInput({ ...conv, conversation_id: randomUUID() }, 1, 'ann')), null);
      await kit.store.conversations.softDelete(w(conv));
      assert.equal(await kit.store.messages.append(messageInput(conv, 1, 'ann')), null);
      assert.equal(await kit.store.messages.list({ ...ref(conv), viewer_user_id: null, limit: 5 }), null);
    });

    test('history is newest first and pages exactly by seq, tombstones included', async (kit) => {
      const conv = await createConversation(kit, ['ann', 'bob']);
      const sent = [];
      for (let seq = 1; seq <= 11; seq += 1) sent.push(await send(kit, conv, seq, seq % 2 ? 'ann' : 'bob'));
      await kit.store.messages.tombstone({ ...w(conv), message_id: sent[4]!.message_id });
      for (const limit of [1, 4, 11, 50]) assert.deepEqual(await history(kit, conv, limit), [11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1], `limit ${limit}`);
      const page = await kit.store.messages.list({ ...ref(conv), viewer_user_id: null, limit: 3, after: { seq: 6 } });
      assert.deepEqual(page?.items.map((m) => m.seq), [5, 4, 3]);
      assert.equal(page?.items[0]?.status, 'DELETED');
      assert.equal(page?.items[0]?.body, '');
      assert.deepEqual(page?.next, { seq: 3 });
      for (const bad of [{ seq: 0 }, { seq: -1 }, { seq: 1.5 }, { seq: '3' }, { seq: 3, x: 1 }, 'x', []]) {
        await assert.rejects(kit.store.messages.list({ ...ref(conv), viewer_user_id: null, limit: 3, after: bad as MessagePosition }), InvalidPositionError);
      }
    });

    test('edit sets EDITED and edited_at; a tombstone cannot be edited back', async (kit) => {
      const conv = await createConversation(kit, ['ann', 'bob']);
      const m = await send(kit, conv, 1, 'ann', { mentioned_user_ids: ['bob'] });
      const at = kit.tick();
      const edited = await kit.store.messages.edit({ ...w(conv, at), message_id: m.message_id, body: 'fixed' });
      assert.equal(edited?.body, 'fixed');
      assert.equal(edited?.status, 'EDITED');
      assert.equal(edited?.edited_at, at);
      assert.equal(edited?.updated_at, at);
      assert.deepEqual(edited?.mentioned_user_ids, ['bob'], 'mentions stay unless given');
      const remention = await kit.store.messages.edit({ ...w(conv), message_id: m.message_id, body: 'again', mentioned_user_ids: [] });
      assert.deepEqual(remention?.mentioned_user_ids, []);
      await kit.store.messages.tombstone({ ...w(conv), message_id: m.message_id });
      const after = await kit.store.messages.edit({ ...w(conv), message_id: m.message_id, body: 'resurrect' });
      assert.equal(after?.status, 'DELETED');
      assert.equal(after?.body, '');
    });

    test('tombstone empties the content, keeps the row, and is idempotent', async (kit) => {
      const conv = await createConversation(kit, ['ann', 'bob']);
      const attachments = [{ file_id: 'f', name: 'n', mime_type: 'text/plain', size: 1, url: 'https://files/f' }];
      const m = await send(kit, conv, 1, 'ann', { attachments, mentioned_user_ids: ['bob'], message_type: 'FILE' });
      await kit.store.reactions.add({ ...w(conv), message_id: m.message_id, user_id: 'bob', emoji: '👍' });
      const at = kit.tick();
      const dead = await kit.store.messages.tombstone({ ...w(conv, at), message_id: m.message_id });
      assert.deepEqual(
        { body: dead?.body, attachments: dead?.attachments, mentions: dead?.mentioned_user_ids, status: dead?.status, deleted_at: dead?.deleted_at },
        { body: '', attachments: [], mentions: [], status: 'DELETED', deleted_at: at },
      );
      const again = await kit.store.messages.tombstone({ ...w(conv, kit.tick()), message_id: m.message_id });
      assert.equal(again?.deleted_at, at);
      const view = await kit.store.messages.get(ref(conv), m.message_id, 'bob');
      assert.deepEqual(view?.reactions, []);
      assert.equal(view?.seq, 1);
    });

    test('get finds a message only in its own conversation and context', async (kit) => {
      await kit.store.profiles.upsert(kit.ctx.tenant_id, [{ user_id: 'ann', display_name: 'Ann', avatar_url: null }], 'idp');
      const conv = await createConversation(kit, ['ann']);
      const other = await createConversation(kit, ['ann']);
      const m = await send(kit, conv, 1, 'ann');
      const sys = await send(kit, conv, 2, null);
      const view = await kit.store.messages.get(ref(conv), m.message_id, null);
      assert.deepEqual(view?.sender, { user_id: 'ann', display_name: 'Ann', avatar_url: null });
      assert.equal((await kit.store.messages.get(ref(conv), sys.message_id, null))?.sender, null);
      assert.equal(await kit.store.messages.get(ref(other), m.message_id, null), null);
      assert.equal(await kit.store.messages.get({ ...ref(conv), application_id: 'app-2' }, m.message_id, null), null);
      assert.equal(await kit.store.messages.edit({ ...w(other), message_id: m.message_id, body: 'x' }), null);
      assert.equal(await kit.store.messages.tombstone({ ...w(other), message_id: m.message_id }), null);
    });

    test('retention deletes the tenant messages older than N days, in batches, and only those', async (kit) => {
      const day = 24 * 60 * 60;
      const conv = await createConversation(kit, ['ann'], { at: kit.at(0) });
      const foreign = await createConversation(kit, ['ann'], { at: kit.at(0), ctx: { tenant_id: `${kit.ctx.tenant_id}-x`, application_id: 'app-1' } });
      for (let seq = 1; seq <= 7; seq += 1) await send(kit, conv, seq, 'ann', { at: kit.at(seq) });
      await send(kit, conv, 8, 'ann', { at: kit.at(10 * day) });
      await send(kit, foreign, 1, 'ann', { at: kit.at(1) });
      const old = await kit.store.messages.list({ ...ref(conv), viewer_user_id: null, limit: 20 });
      await kit.store.reactions.add({ ...w(conv), message_id: old!.items[7]!.message_id, user_id: 'ann', emoji: '🔥' });
      const deleted = await kit.store.messages.deleteExpired({ tenant_id: kit.ctx.tenant_id, days: 5, at: kit.at(10 * day + 60), batch_size: 3 });
      assert.equal(deleted, 7);
      assert.deepEqual(await history(kit, conv, 10), [8]);
      assert.deepEqual(await history(kit, foreign, 10), [1]);
      assert.equal((await kit.store.conversations.get(ref(conv), { kind: 'machine' }, 0))?.last_seq, 8, 'seqs are never reused');
      await assert.rejects(kit.store.messages.append(messageInput(conv, 8, 'ann')), SeqConflictError);
    });

    test('retention reads a day in batches past messages that share a time, and stops at a cutoff inside the day', async (kit) => {
      const day = 24 * 60 * 60;
      const conv = await createConversation(kit, ['ann'], { at: kit.at(0) });
      // Five messages at one instant, so batches of 2 split them; then one before the cutoff and two after it, the same day.
      for (let seq = 1; seq <= 5; seq += 1) await send(kit, conv, seq, 'ann', { at: kit.at(100) });
      for (const [seq, second] of [[6, 200], [7, 300], [8, 400]] as const) await send(kit, conv, seq, 'ann', { at: kit.at(second) });
      const pass = { tenant_id: kit.ctx.tenant_id, days: 1, at: kit.at(day + 250), batch_size: 2 };
      assert.equal(await kit.store.messages.deleteExpired(pass), 6);
      assert.deepEqual(await history(kit, conv, 10), [8, 7]);
      assert.equal(await kit.store.messages.deleteExpired(pass), 0, 'a second pass finds nothing left before the cutoff');
      assert.equal(await kit.store.messages.deleteExpired({ ...pass, at: kit.at(day + 500) }), 2, 'the rest of the day expires later');
      assert.deepEqual(await history(kit, conv, 10), []);
    });
  });
}
