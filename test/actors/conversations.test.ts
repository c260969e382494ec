/**
 * Conversation lifecycle and state rules through the actors: DIRECT deduplication and
 * immutability, update, archive (read-only), soft delete, edits and deletes of messages.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { create, history, rejectsWith, text, withKit } from './helpers.ts';

const ann = { user_id: 'ann', client_id: null };
const bob = { user_id: 'bob', client_id: null };

describe('conversations', () => {
  it('concurrent DIRECT creates of one pair yield one conversation and one conversation.created', async () => {
    await withKit(async (kit) => {
      const rec = kit.record(['ann', 'bob']);
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          kit.host.createConversation({
            tenant_id: kit.tenant_id,
            application_id: kit.application_id,
            type: 'DIRECT',
            name: null,
            description: null,
            created_by_user_id: i % 2 ? 'ann' : 'bob',
            created_by_client_id: null,
            member_user_ids: [i % 2 ? 'bob' : 'ann'],
          }),
        ),
      );
      assert.equal(new Set(results.map((r) => r.conversation.conversation_id)).size, 1);
      assert.equal(results.filter((r) => r.created).length, 1);
      assert.deepEqual(rec.typesOf('ann'), ['conversation.created']);
      assert.deepEqual(rec.typesOf('bob'), ['conversation.created']);
      const event = rec.user('ann')[0]!;
      assert.ok(event.type === 'conversation.created');
      assert.deepEqual(event.data.conversation.members?.map((m) => m.user_id).sort(), ['ann', 'bob']);
      assert.equal('my_role' in event.data.conversation, false, 'no viewer-specific fields');
      // The actor that created it serves it without another claim.
      const id = results[0]!.conversation.conversation_id;
      assert.equal((await kit.host.sendMessage(kit.ref(id), text('ann', 'hi'))).message.seq, 1);
    });
  });

  it('DIRECT: exactly two members, and membership never changes', async () => {
    await withKit(async (kit) => {
      const base = { tenant_id: kit.tenant_id, application_id: kit.application_id, type: 'DIRECT' as const, name: null, description: null, created_by_client_id: null };
      await rejectsWith(kit.host.createConversation({ ...base, created_by_user_id: 'ann', member_user_ids: ['ann'] }), 'invalid_request');
      await rejectsWith(kit.host.createConversation({ ...base, created_by_user_id: 'ann', member_user_ids: ['bob', 'carl'] }), 'invalid_request');
      const id = await create(kit, 'DIRECT', ['ann', 'bob']);
      await rejectsWith(kit.host.addMember(kit.ref(id), { user_id: 'carl', by: ann }), 'direct_conversation_immutable');
      await rejectsWith(kit.host.removeMember(kit.ref(id), { user_id: 'bob', by: ann }), 'direct_conversation_immutable');
      await rejectsWith(kit.host.leave(kit.ref(id), 'ann'), 'direct_conversation_immutable');
      const members = await kit.store.members.list({ ...kit.ref(id), limit: 10 });
      assert.deepEqual(members?.items.map((m) => m.user_id).sort(), ['ann', 'bob']);
    });
  });

  it('GROUP and CHANNEL: the creator is OWNER, the others MEMBER', async () => {
    await withKit(async (kit) => {
      for (const type of ['GROUP', 'CHANNEL'] as const) {
        const id = await create(kit, type, ['ann', 'bob']);
        assert.equal((await kit.store.members.get(kit.ref(id), 'ann'))?.role, 'OWNER');
        assert.equal((await kit.store.members.get(kit.ref(id), 'bob'))?.role, 'MEMBER');
      }
    });
  });

  it('update changes the fields sent; archive makes it read-only except leaving and reading', async () => {
    await withKit(async (kit) => {
      const id = await create(kit, 'GROUP', ['ann', 'bob', 'carl']);
      const { message } = await kit.host.sendMessage(kit.ref(id), text('bob', 'before'));
      const rec = kit.record(['ann']);
      const updated = await kit.host.updateConversation(kit.ref(id), { name: 'renamed', by: ann });
      assert.equal(updated.name, 'renamed');
      assert.equal(updated.description, null);
      const archived = await kit.host.archive(kit.ref(id), ann);
      assert.equal(archived.status, 'ARCHIVED');
      assert.equal((await kit.host.archive(kit.ref(id), ann)).status, 'ARCHIVED', 'archiving again changes nothing');
      const mid = { message_id: message.message_id, by: bob, scope: 'own' as const };
      await rejectsWith(kit.host.sendMessage(kit.ref(id), text('ann', 'x')), 'conversation_archived');
      await rejectsWith(kit.host.editMessage(kit.ref(id), { ...mid, body: 'x' }), 'conversation_archived');
      await rejectsWith(kit.host.deleteMessage(kit.ref(id), mid), 'conversation_archived');
      await rejectsWith(kit.host.addReaction(kit.ref(id), { message_id: message.message_id, user_id: 'ann', emoji: '👍' }), 'conversation_archived');
      await rejectsWith(kit.host.addMember(kit.ref(id), { user_id: 'dave', by: ann }), 'conversation_archived');
      await rejectsWith(kit.host.updateConversation(kit.ref(id), { description: 'x', by: ann }), 'conversation_archived');
      await rejectsWith(kit.host.typing(kit.ref(id), { user_id: 'ann' }), 'conversation_archived');
      assert.equal((await kit.host.markRead(kit.ref(id), { user_id: 'ann', seq: 1 })).last_read_seq, 1);
      assert.equal((await kit.host.leave(kit.ref(id), 'carl')).member.status, 'LEFT');
      await kit.host.unarchive(kit.ref(id), ann);
      assert.deepEqual(rec.typesOf('ann'), ['conversation.updated', 'conversation.archived', 'read.updated', 'member.removed', 'conversation.unarchived']);
      const first = rec.user('ann')[0]!;
      assert.ok(first.type === 'conversation.updated');
      assert.deepEqual(first.data.changed, ['name']);
      assert.equal(first.data.conversation.name, 'renamed');
    });
  });

  it('soft delete: the conversation is gone for every later operation', async () => {
    await withKit(async (kit) => {
      const id = await create(kit, 'GROUP', ['ann', 'bob']);
      const rec = kit.record(['bob']);
      await kit.host.softDelete(kit.ref(id), ann);
      assert.deepEqual(rec.typesOf('bob'), ['conversation.deleted']);
      await rejectsWith(kit.host.sendMessage(kit.ref(id), text('ann', 'x')), 'not_found');
      await rejectsWith(kit.host.softDelete(kit.ref(id), ann), 'not_found');
      kit.clock.now += 120_000;
      kit.host.passivateIdle();
      await rejectsWith(kit.host.addMember(kit.ref(id), { user_id: 'carl', by: ann }), 'not_found');
    });
  });

  it('edit and delete: author only unless moderating; tombstones stay in history', async () => {
    await withKit(async (kit) => {
      const id = await create(kit, 'GROUP', ['ann', 'bob']);
      const { message } = await kit.host.sendMessage(kit.ref(id), text('bob', 'original'));
      const mine = { message_id: message.message_id, scope: 'own' as const };
      await rejectsWith(kit.host.editMessage(kit.ref(id), { ...mine, body: 'x', by: ann }), 'missing_capability');
      const edited = await kit.host.editMessage(kit.ref(id), { ...mine, body: 'edited', by: bob });
      assert.equal(edited.status, 'EDITED');
      assert.equal(edited.body, 'edited');
      await rejectsWith(kit.host.deleteMessage(kit.ref(id), { ...mine, by: ann }), 'missing_capability');
      await kit.host.deleteMessage(kit.ref(id), { message_id: message.message_id, by: ann, scope: 'any' });
      await kit.host.deleteMessage(kit.ref(id), { message_id: message.message_id, by: ann, scope: 'any' }); // again: no-op
      await rejectsWith(kit.host.editMessage(kit.ref(id), { ...mine, body: 'x', by: bob }), 'not_found');
      await rejectsWith(kit.host.deleteMessage(kit.ref(id), { message_id: randomUUID(), by: bob, scope: 'any' }), 'not_found');
      assert.deepEqual(await history(kit, id), [{ seq: 1, body: '', message_id: message.message_id, status: 'DELETED' }]);
    });
  });

  it('members: re-adding a member who left reactivates them; removing a non-member is not_found', async () => {
    await withKit(async (kit) => {
      const id = await create(kit, 'GROUP', ['ann', 'bob']);
      const first = (await kit.store.members.get(kit.ref(id), 'bob'))!;
      await kit.host.leave(kit.ref(id), 'bob');
      assert.equal((await kit.host.leave(kit.ref(id), 'bob')).changed, false);
      const again = await kit.host.addMember(kit.ref(id), { user_id: 'bob', by: ann });
      assert.deepEqual([again.changed, again.member.status, again.member.member_id], [true, 'ACTIVE', first.member_id]);
      assert.equal((await kit.host.addMember(kit.ref(id), { user_id: 'bob', by: ann })).changed, false);
      assert.equal((await kit.host.sendMessage(kit.ref(id), text('bob', 'back'))).message.seq, 1);
      await rejectsWith(kit.host.removeMember(kit.ref(id), { user_id: 'nobody', by: ann }), 'not_found');
    });
  });

  it('reactions and read markers need an ACTIVE member and a live message', async () => {
    await withKit(async (kit) => {
      const id = await create(kit, 'GROUP', ['ann', 'bob']);
      const { message } = await kit.host.sendMessage(kit.ref(id), text('bob', 'hi'));
      const r = { message_id: message.message_id, user_id: 'ann', emoji: '🎉' };
      assert.deepEqual(await kit.host.addReaction(kit.ref(id), r), { reactions: [{ emoji: '🎉', count: 1, reacted_by_me: true }], changed: true });
      assert.equal((await kit.host.addReaction(kit.ref(id), r)).changed, false);
      assert.equal((await kit.host.removeReaction(kit.ref(id), r)).changed, true);
      await rejectsWith(kit.host.addReaction(kit.ref(id), { ...r, user_id: 'mallory' }), 'not_conversation_member');
      await rejectsWith(kit.host.addReaction(kit.ref(id), { ...r, message_id: randomUUID() }), 'not_found');
      await rejectsWith(kit.host.markRead(kit.ref(id), { user_id: 'mallory', seq: 1 }), 'not_conversation_member');
      await rejectsWith(kit.host.typing(kit.ref(id), { user_id: 'mallory' }), 'not_conversation_member');
      const read = await kit.host.markRead(kit.ref(id), { user_id: 'ann', seq: 99 });
      assert.deepEqual(read, { last_read_seq: 1, unread_count: 0, has_unread: false, changed: true });
    });
  });
});
