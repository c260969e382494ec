/** Contract: creating, claiming, updating, deleting and reading conversations. */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe } from 'node:test';
import { IdConflictError, StaleEpochError } from '../errors.ts';
import { createConversation, messageInput, ref, storeTest, w, type MakeStore } from './fixtures.ts';

export function conversationContract(make: MakeStore): void {
  const test = storeTest(make);

  describe('conversations', () => {
    test('create stores the record, its ACTIVE members and member_count', async (kit) => {
      const at = kit.tick();
      const conv = await createConversation(kit, ['ann', 'bob', 'cid'], { at, name: 'Team' });
      assert.equal(conv.type, 'GROUP');
      assert.equal(conv.visibility, null);
      assert.equal(conv.status, 'ACTIVE');
      assert.equal(conv.member_count, 3);
      assert.equal(conv.last_seq, 0);
      assert.equal(conv.epoch, 1);
      assert.deepEqual([conv.created_at, conv.updated_at, conv.last_activity_at], [at, at, at]);
      const got = await kit.store.conversations.get(ref(conv), { kind: 'user', user_id: 'ann' }, 10);
      assert.ok(got);
      assert.equal(got.my_role, 'OWNER');
      assert.equal(got.my_membership?.status, 'ACTIVE');
      assert.deepEqual(got.members?.map((m) => m.user_id), ['ann', 'bob', 'cid']);
    });

    test('a retried create answers the stored conversation and duplicates nothing', async (kit) => {
      const conversation_id = randomUUID();
      const first = await createConversation(kit, ['ann', 'bob'], { conversation_id });
      const again = await kit.store.conversations.create({
        ...kit.ctx, conversation_id, type: 'GROUP', name: 'other name', description: null, created_by_user_id: 'ann', created_by_client_id: null,
        members: [{ member_id: randomUUID(), user_id: 'zed', role: 'OWNER' }],
      });
      assert.equal(again.created, false);
      assert.deepEqual(again.conversation, first);
      const members = await kit.store.members.list({ ...ref(first), limit: 10 });
      assert.deepEqual(members?.items.map((m) => m.user_id), ['ann', 'bob']);
    });

    test('the same id in another context or with another type is an IdConflictError', async (kit) => {
      const conv = await createConversation(kit, ['ann', 'bob']);
      await assert.rejects(createConversation(kit, ['ann'], { conversation_id: conv.conversation_id, ctx: { ...kit.ctx, application_id: 'app-2' } }), IdConflictError);
      await assert.rejects(createConversation(kit, ['ann'], { conversation_id: conv.conversation_id, type: 'CHANNEL' }), IdConflictError);
    });

    test('CHANNEL visibility defaults to PUBLIC; DIRECT and GROUP have none', async (kit) => {
      assert.equal((await createConversation(kit, ['ann'], { type: 'CHANNEL' })).visibility, 'PUBLIC');
      assert.equal((await createConversation(kit, ['ann'], { type: 'CHANNEL', visibility: 'PRIVATE' })).visibility, 'PRIVATE');
      assert.equal((await createConversation(kit, ['ann', 'bob'], { type: 'GROUP', visibility: 'PUBLIC' })).visibility, null);
    });

    test('DIRECT needs exactly two distinct users; duplicate members are refused', async (kit) => {
      await assert.rejects(createConversation(kit, ['ann'], { type: 'DIRECT' }), RangeError);
      await assert.rejects(createConversation(kit, ['ann', 'bob', 'cid'], { type: 'DIRECT' }), RangeError);
      await assert.rejects(createConversation(kit, ['ann', 'ann'], { type: 'DIRECT' }), RangeError);
      await assert.rejects(createConversation(kit, ['ann', 'bob', 'ann']), RangeError);
    });

    test('DIRECT is deduplicated on its pair, in either order, per context', async (kit) => {
      const first = await createConversation(kit, ['ann', 'bob'], { type: 'DIRECT' });
      const second = await kit.store.conversations.create({
        ...kit.ctx, conversation_id: randomUUID(), type: 'DIRECT', name: null, description: null, created_by_user_id: 'bob', created_by_client_id: null,
        members: [{ member_id: randomUUID(), user_id: 'bob', role: 'MEMBER' }, { member_id: randomUUID(), user_id: 'ann', role: 'MEMBER' }],
      });
      assert.equal(second.created, false);
      assert.equal(second.conversation.conversation_id, first.conversation_id);
      const elsewhere = await createConversation(kit, ['ann', 'bob'], { type: 'DIRECT', ctx: { ...kit.ctx, application_id: 'app-2' } });
      assert.notEqual(elsewhere.conversation_id, first.conversation_id);
    });

    test('a soft-deleted DIRECT frees its pair; the deleted one is gone from reads', async (kit) => {
      const first = await createConversation(kit, ['ann', 'bob'], { type: 'DIRECT' });
      const deleted = await kit.store.conversations.softDelete(w(first, kit.tick()));
      assert.ok(deleted?.deleted_at);
      assert.equal(await kit.store.conversations.get(ref(first), { kind: 'machine' }, 0), null);
      assert.equal(await kit.store.conversations.softDelete(w(first)), null);
      const next = await createConversation(kit, ['bob', 'ann'], { type: 'DIRECT' });
      assert.notEqual(next.conversation_id, first.conversation_id);
      const page = await kit.store.conversations.list({ ...kit.ctx, viewer: { kind: 'machine' }, limit: 10, members_preview: 0 });
      assert.deepEqual(page.items.map((c) => c.conversation_id), [next.conversation_id]);
    });

    test('reads are scoped: another tenant or application sees nothing', async (kit) => {
      const conv = await createConversation(kit, ['ann', 'bob']);
      for (const scope of [{ tenant_id: 'tenant-other' }, { application_id: 'app-2' }]) {
        const foreign = { ...ref(conv), ...scope };
        assert.equal(await kit.store.conversations.get(foreign, { kind: 'machine' }, 5), null);
        assert.equal(await kit.store.conversations.claim(foreign), null);
        assert.equal(await kit.store.conversations.update({ ...w(conv), ...scope, patch: { name: 'x' } }), null);
        assert.equal(await kit.store.members.list({ ...foreign, limit: 5 }), null);
        assert.equal(await kit.store.messages.list({ ...foreign, viewer_user_id: null, limit: 5 }), null);
      }
      assert.equal(await kit.store.conversations.get({ ...kit.ctx, conversation_id: randomUUID() }, { kind: 'machine' }, 5), null);
    });

    test('update applies only the fields given; visibility stays null outside channels', async (kit) => {
      const conv = await createConversation(kit, ['ann'], { name: 'Old' });
      const at = kit.tick();
      const updated = await kit.store.conversations.update({ ...w(conv, at), patch: { description: 'About', status: 'ARCHIVED', visibility: 'PUBLIC' } });
      assert.equal(updated?.name, 'Old');
      assert.equal(updated?.description, 'About');
      assert.equal(updated?.status, 'ARCHIVED');
      assert.equal(updated?.visibility, null);
      assert.equal(updated?.updated_at, at);
      const cleared = await kit.store.conversations.update({ ...w(conv), patch: { description: null, status: 'ACTIVE' } });
      assert.equal(cleared?.description, null);
      assert.equal(cleared?.status, 'ACTIVE');
    });

    test('claim raises the epoch and fences every older holder', async (kit) => {
      const conv = await createConversation(kit, ['ann', 'bob']);
      const claimed = await kit.store.conversations.claim(ref(conv));
      assert.equal(claimed?.epoch, conv.epoch + 1);
      const stale = { ...w(conv), patch: { name: 'stale' } };
      const error = await kit.store.conversations.update(stale).then(() => null, (e: unknown) => e);
      assert.ok(error instanceof StaleEpochError);
      assert.equal(error.current_epoch, conv.epoch + 1);
      await assert.rejects(kit.store.messages.append({ ...w(conv), message_id: randomUUID(), seq: 1, sender_user_id: 'ann', sender_client_id: null, body: 'x', message_type: 'TEXT' }), StaleEpochError);
      await assert.rejects(kit.store.members.add({ ...w(conv), member_id: randomUUID(), user_id: 'cid', role: 'MEMBER' }), StaleEpochError);
      await assert.rejects(kit.store.readState.markRead({ ...w(conv), user_id: 'ann', seq: 1 }), StaleEpochError);
      await assert.rejects(kit.store.conversations.softDelete(w(conv)), StaleEpochError);
      const after = await kit.store.conversations.get(ref(conv), { kind: 'machine' }, 5);
      assert.equal(after?.name, conv.name);
      assert.equal(after?.last_seq, 0);
      assert.equal(after?.member_count, 2);
      assert.equal((await kit.store.conversations.update({ ...w(claimed!), patch: { name: 'owner' } }))?.name, 'owner');
    });

    test('a higher epoch from outside (a lease) is adopted and fences lower ones', async (kit) => {
      const conv = await createConversation(kit, ['ann']);
      const leased = await kit.store.conversations.update({ ...w(conv), epoch: 7, patch: { name: 'leased' } });
      assert.equal(leased?.epoch, 7);
      await assert.rejects(kit.store.conversations.update({ ...w(conv), epoch: 6, patch: { name: 'late' } }), StaleEpochError);
      assert.equal((await kit.store.conversations.claim(ref(conv)))?.epoch, 8);
    });

    test('after a release the next claim numbers on from the last message; a stale release changes nothing', async (kit) => {
      const conv = await createConversation(kit, ['ann']);
      const first = (await kit.store.conversations.claim(ref(conv)))!;
      for (const seq of [1, 2, 3]) await kit.store.messages.append(messageInput(first, seq, 'ann'));
      await kit.store.conversations.release(w(first));
      const second = (await kit.store.conversations.claim(ref(conv)))!;
      assert.equal(second.last_seq, 3);
      await kit.store.conversations.release(w(first));
      assert.equal((await kit.store.messages.append(messageInput(second, 4, 'ann')))?.created, true);
      assert.equal((await kit.store.conversations.get(ref(conv), { kind: 'machine' }, 0))?.last_seq, 4);
    });

    test('claim of a deleted or unknown conversation is null', async (kit) => {
      const conv = await createConversation(kit, ['ann']);
      await kit.store.conversations.softDelete(w(conv));
      assert.equal(await kit.store.conversations.claim(ref(conv)), null);
      assert.equal(await kit.store.conversations.claim({ ...kit.ctx, conversation_id: randomUUID() }), null);
    });

    test('overview counts non-deleted conversations by type and distinct active members', async (kit) => {
      await createConversation(kit, ['ann', 'bob'], { type: 'DIRECT' });
      await createConversation(kit, ['ann', 'cid'], { type: 'GROUP' });
      await createConversation(kit, ['dan'], { type: 'CHANNEL', ctx: { ...kit.ctx, application_id: 'app-2' } });
      const gone = await createConversation(kit, ['eve', 'fay'], { type: 'GROUP' });
      await kit.store.conversations.softDelete(w(gone));
      const left = await createConversation(kit, ['ann', 'gus'], { type: 'GROUP' });
      await kit.store.members.setStatus({ ...w(left), user_id: 'gus', status: 'LEFT' });
      await createConversation(kit, ['zed'], { type: 'GROUP', ctx: { tenant_id: `${kit.ctx.tenant_id}-other`, application_id: 'app-1' } });
      const overview = await kit.store.conversations.overview(kit.ctx.tenant_id);
      assert.deepEqual(overview.conversations, { direct: 1, group: 2, channel: 1, total: 4 });
      assert.equal(overview.members, 4); // ann, bob, cid, dan
    });
  });
}
