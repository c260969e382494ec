/**
 * Who receives which event (docs/events.md): every channel a test user or conversation could be
 * listening on is recorded, and each event must reach exactly the expected channels.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ChatEvent } from '../../src/actors/index.ts';
import { create, text, withKit } from './helpers.ts';

const ann = { user_id: 'ann', client_id: null };
const types = (events: ChatEvent[]): string[] => events.map((e) => e.type);

describe('fan-out', () => {
  it('DIRECT: both members, nobody else', async () => {
    await withKit(async (kit) => {
      const rec = kit.record(['ann', 'bob', 'carl']);
      const id = await create(kit, 'DIRECT', ['ann', 'bob']);
      await kit.host.sendMessage(kit.ref(id), text('ann', 'hi'));
      await kit.host.typing(kit.ref(id), { user_id: 'bob' });
      assert.deepEqual(rec.typesOf('ann'), ['conversation.created', 'message.created', 'typing']);
      assert.deepEqual(rec.typesOf('bob'), ['conversation.created', 'message.created', 'typing']);
      assert.deepEqual(rec.typesOf('carl'), []);
      assert.equal(rec.conversation(id).length, 0, 'nothing on a conversation channel for DIRECT');
    });
  });

  it('GROUP: every ACTIVE member after the mutation, plus the member removed', async () => {
    await withKit(async (kit) => {
      const id = await create(kit, 'GROUP', ['ann', 'bob']);
      const rec = kit.record(['ann', 'bob', 'carl', 'dave'], [id]);
      const { message } = await kit.host.sendMessage(kit.ref(id), text('ann', 'one'));
      await kit.host.addMember(kit.ref(id), { user_id: 'carl', by: ann });
      await kit.host.removeMember(kit.ref(id), { user_id: 'bob', by: ann });
      await kit.host.sendMessage(kit.ref(id), text('carl', 'two'));
      await kit.host.addReaction(kit.ref(id), { message_id: message.message_id, user_id: 'carl', emoji: '👍' });
      await kit.host.editMessage(kit.ref(id), { message_id: message.message_id, body: 'one!', by: ann, scope: 'own' });
      await kit.host.deleteMessage(kit.ref(id), { message_id: message.message_id, by: ann, scope: 'own' });
      await kit.host.markRead(kit.ref(id), { user_id: 'carl', seq: 2 });
      const after = ['member.removed', 'message.created', 'reaction.added', 'message.updated', 'message.deleted', 'read.updated'];
      assert.deepEqual(rec.typesOf('ann'), ['message.created', 'member.added', ...after]);
      assert.deepEqual(rec.typesOf('bob'), ['message.created', 'member.added', 'member.removed']);
      assert.deepEqual(rec.typesOf('carl'), ['member.added', ...after]);
      assert.deepEqual(rec.typesOf('dave'), []);
      assert.equal(rec.conversation(id).length, 0);
      const removed = rec.user('bob')[2]!;
      assert.ok(removed.type === 'member.removed');
      assert.equal(removed.data.member.user_id, 'bob');
      assert.equal(removed.data.member.status, 'REMOVED');
      assert.deepEqual(removed.data.by, ann);
    });
  });

  it('CHANNEL: once on the conversation channel; membership events also on the subject user channel', async () => {
    await withKit(async (kit) => {
      const rec = kit.record(['ann', 'bob', 'carl', 'dave']);
      const id = await create(kit, 'CHANNEL', ['ann', 'bob']);
      // Initial members learn of the channel on their own channels (nobody follows it yet).
      assert.deepEqual(rec.typesOf('ann'), ['conversation.created']);
      assert.deepEqual(rec.typesOf('bob'), ['conversation.created']);
      const conv = kit.record([], [id]);
      const { message } = await kit.host.sendMessage(kit.ref(id), text('ann', 'hello', { mentioned_user_ids: ['bob'] }));
      await kit.host.addMember(kit.ref(id), { user_id: 'carl', by: { user_id: 'carl', client_id: null } });
      await kit.host.addReaction(kit.ref(id), { message_id: message.message_id, user_id: 'carl', emoji: '👀' });
      // carl joined after message 1, so his marker is already there: no change, no event.
      assert.equal((await kit.host.markRead(kit.ref(id), { user_id: 'carl', seq: 1 })).changed, false);
      await kit.host.markRead(kit.ref(id), { user_id: 'bob', seq: 1 });
      await kit.host.leave(kit.ref(id), 'bob');
      await kit.host.typing(kit.ref(id), { user_id: 'ann' });
      await kit.host.updateConversation(kit.ref(id), { description: 'about', by: ann });
      assert.deepEqual(types(conv.conversation(id)), ['message.created', 'member.added', 'reaction.added', 'member.removed', 'typing', 'conversation.updated']);
      assert.deepEqual(rec.typesOf('ann'), ['conversation.created'], 'members do not get channel traffic on their own channel');
      assert.deepEqual(rec.typesOf('carl'), ['member.added'], 'the added user');
      assert.deepEqual(rec.typesOf('bob'), ['conversation.created', 'read.updated', 'member.removed'], 'own read marker, own removal');
      assert.deepEqual(rec.typesOf('dave'), []);
      const added = rec.user('carl')[0]!;
      assert.ok(added.type === 'member.added');
      assert.equal(added.data.conversation.type, 'CHANNEL');
      assert.equal(added.data.conversation.visibility, 'PUBLIC');
      assert.equal('members' in added.data.conversation, false, 'CHANNEL conversations list no members');
      assert.equal(added.data.conversation.member_count, 3);
    });
  });

  it('every stored event carries the conversation seq; typing carries none', async () => {
    await withKit(async (kit) => {
      const id = await create(kit, 'GROUP', ['ann', 'bob']);
      const rec = kit.record(['bob']);
      await kit.host.sendMessage(kit.ref(id), text('ann', 'one'));
      await kit.host.typing(kit.ref(id), { user_id: 'ann' });
      await kit.host.sendMessage(kit.ref(id), text('ann', 'two'));
      await kit.host.updateConversation(kit.ref(id), { name: 'x', by: ann });
      const events = rec.user('bob');
      assert.deepEqual(events.map((e) => ('seq' in e ? e.seq : null)), [1, null, 2, 2]);
      assert.ok(events.every((e) => e.tenant_id === kit.tenant_id && e.application_id === kit.application_id && e.conversation_id === id));
      assert.ok(events.every((e) => /^\d+-\d+$/.test(e.id)));
    });
  });
});
