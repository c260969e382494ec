/** Contract: concurrent writes, atomicity per write, call order, close. */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { SeqConflictError, StaleEpochError, StoreClosedError } from '../errors.ts';
import { createConversation, messageInput, ref, storeTest, w, type MakeStore } from './fixtures.ts';

export function concurrencyContract(make: MakeStore): void {
  const test = storeTest(make);

  describe('concurrency and atomicity', () => {
    test('50 concurrent creates of one DIRECT pair yield exactly one conversation', async (kit) => {
      const attempts = Array.from({ length: 50 }, (_, i) =>
        kit.store.conversations.create({
          ...kit.ctx, conversation_id: randomUUID(), type: 'DIRECT', name: null, description: null,
          created_by_user_id: i % 2 ? 'ann' : 'bob', created_by_client_id: null,
          members: (i % 2 ? ['ann', 'bob'] : ['bob', 'ann']).map((user_id) => ({ member_id: randomUUID(), user_id, role: 'MEMBER' as const })),
        }),
      );
      const results = await Promise.all(attempts);
      assert.equal(results.filter((r) => r.created).length, 1);
      assert.equal(new Set(results.map((r) => r.conversation.conversation_id)).size, 1);
      const page = await kit.store.conversations.list({ ...kit.ctx, viewer: { kind: 'machine' }, limit: 100, members_preview: 5 });
      assert.equal(page.items.length, 1);
      assert.equal(page.items[0]?.member_count, 2);
      assert.deepEqual(page.items[0]?.members?.map((m) => m.user_id).sort(), ['ann', 'bob']);
    });

    test('300 parallel appends to one conversation are all stored, once, in seq order', async (kit) => {
      const conv = await createConversation(kit, ['ann', 'bob']);
      const inputs = Array.from({ length: 300 }, (_, i) => messageInput(conv, i + 1, i % 2 ? 'ann' : 'bob', { at: kit.at(10) }));
      const results = await Promise.all(inputs.map((input) => kit.store.messages.append(input)));
      assert.ok(results.every((r) => r?.created));
      const page = await kit.store.messages.list({ ...ref(conv), viewer_user_id: null, limit: 1000 });
      assert.deepEqual(page?.items.map((m) => m.seq), Array.from({ length: 300 }, (_, i) => 300 - i));
      assert.deepEqual(new Set(page?.items.map((m) => m.message_id)), new Set(inputs.map((i) => i.message_id)));
      assert.equal((await kit.store.conversations.get(ref(conv), { kind: 'machine' }, 0))?.last_seq, 300);
    });

    test('a failing write fails alone, even among writes committed with it', async (kit) => {
      const conv = await createConversation(kit, ['ann', 'bob']);
      const claimed = (await kit.store.conversations.claim(ref(conv)))!;
      const ok1 = messageInput(claimed, 1, 'ann');
      const dup = messageInput(claimed, 1, 'bob');
      const stale = messageInput(conv, 2, 'bob');
      const ok2 = messageInput(claimed, 2, 'ann');
      const settled = await Promise.allSettled([
        kit.store.messages.append(ok1),
        kit.store.messages.append(dup),
        kit.store.messages.append(stale),
        kit.store.members.add({ ...w(claimed), member_id: randomUUID(), user_id: 'cid', role: 'MEMBER' }),
        kit.store.messages.append(ok2),
      ]);
      assert.deepEqual(settled.map((s) => s.status), ['fulfilled', 'rejected', 'rejected', 'fulfilled', 'fulfilled']);
      assert.ok(settled[1]?.status === 'rejected' && settled[1].reason instanceof SeqConflictError);
      assert.ok(settled[2]?.status === 'rejected' && settled[2].reason instanceof StaleEpochError);
      const page = await kit.store.messages.list({ ...ref(conv), viewer_user_id: null, limit: 10 });
      assert.deepEqual(page?.items.map((m) => m.message_id), [ok2.message_id, ok1.message_id]);
      assert.equal((await kit.store.conversations.get(ref(conv), { kind: 'machine' }, 0))?.member_count, 3);
    });

    test('unawaited writes of one caller apply in call order; reads after a write see it', async (kit) => {
      const conv = await createConversation(kit, ['ann', 'bob']);
      const m = messageInput(conv, 1, 'ann');
      const appended = kit.store.messages.append(m);
      const edited = kit.store.messages.edit({ ...w(conv), message_id: m.message_id, body: 'second' });
      const deleted = kit.store.messages.tombstone({ ...w(conv), message_id: m.message_id });
      await Promise.all([appended, edited, deleted]);
      assert.equal((await edited)?.body, 'second');
      assert.equal((await kit.store.messages.get(ref(conv), m.message_id, null))?.status, 'DELETED');
    });
  });

  describe('close', () => {
    it('commits queued writes, then refuses everything', async () => {
      const store = await make();
      const ctx = { tenant_id: `tenant-${randomUUID()}`, application_id: 'app-1' };
      const pending = store.conversations.create({
        ...ctx, conversation_id: randomUUID(), type: 'GROUP', name: 'g', description: null, created_by_user_id: 'ann',
        created_by_client_id: null, members: [{ member_id: randomUUID(), user_id: 'ann', role: 'OWNER' }],
      });
      await store.close();
      assert.equal((await pending).created, true);
      await store.close();
      await assert.rejects(store.conversations.list({ ...ctx, viewer: { kind: 'machine' }, limit: 1, members_preview: 0 }), StoreClosedError);
      await assert.rejects(store.settings.update(ctx.tenant_id, { message_retention_days: 1 }), StoreClosedError);
    });
  });
}
