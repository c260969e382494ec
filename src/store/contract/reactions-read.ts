/** Contract: reactions and read state. */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { createConversation, ref, send, storeTest, w, type MakeStore } from './fixtures.ts';

export function reactionReadContract(make: MakeStore): void {
  const test = storeTest(make);

  describe('reactions', () => {
    test('counts per emoji, reacted_by_me per viewer, ordered by first reaction', async (kit) => {
      const conv = await createConversation(kit, ['ann', 'bob', 'cid']);
      const m = await send(kit, conv, 1, 'ann');
      const react = (user_id: string, emoji: string) => kit.store.reactions.add({ ...w(conv, kit.tick()), message_id: m.message_id, user_id, emoji });
      await react('bob', '🎉');
      await react('ann', '👍');
      await react('cid', '🎉');
      const last = await react('cid', '👍');
      assert.deepEqual(last, {
        changed: true,
        reactions: [
          { emoji: '🎉', count: 2, reacted_by_me: true },
          { emoji: '👍', count: 2, reacted_by_me: true },
        ],
      });
      const dup = await react('bob', '🎉');
      assert.equal(dup?.changed, false);
      assert.equal(dup?.reactions[0]?.count, 2);
      const forAnn = await kit.store.messages.list({ ...ref(conv), viewer_user_id: 'ann', limit: 5 });
      assert.deepEqual(forAnn?.items[0]?.reactions, [
        { emoji: '🎉', count: 2, reacted_by_me: false },
        { emoji: '👍', count: 2, reacted_by_me: true },
      ]);
      const forMachine = await kit.store.messages.get(ref(conv), m.message_id, null);
      assert.ok(forMachine?.reactions.every((r) => !r.reacted_by_me));
    });

    test('remove takes one reaction away; an emoji nobody holds disappears', async (kit) => {
      const conv = await createConversation(kit, ['ann', 'bob']);
      const m = await send(kit, conv, 1, 'ann');
      const input = { ...w(conv), message_id: m.message_id, user_id: 'bob', emoji: '👍' };
      await kit.store.reactions.add(input);
      assert.deepEqual(await kit.store.reactions.remove(input), { changed: true, reactions: [] });
      assert.deepEqual(await kit.store.reactions.remove(input), { changed: false, reactions: [] });
    });

    test('reactions on a tombstone or a message elsewhere answer null', async (kit) => {
      const conv = await createConversation(kit, ['ann']);
      const other = await createConversation(kit, ['ann']);
      const m = await send(kit, conv, 1, 'ann');
      assert.equal(await kit.store.reactions.add({ ...w(other), message_id: m.message_id, user_id: 'ann', emoji: '👍' }), null);
      await kit.store.messages.tombstone({ ...w(conv), message_id: m.message_id });
      assert.equal(await kit.store.reactions.add({ ...w(conv), message_id: m.message_id, user_id: 'ann', emoji: '👍' }), null);
    });
  });

  describe('read state', () => {
    test('unread_count is exact: later seqs, not deleted, not sent by the reader', async (kit) => {
      const conv = await createConversation(kit, ['ann', 'bob']);
      const sent = [];
      for (let seq = 1; seq <= 6; seq += 1) sent.push(await send(kit, conv, seq, seq === 3 ? 'bob' : 'ann'));
      await send(kit, conv, 7, null); // SYSTEM counts for everyone
      await kit.store.messages.tombstone({ ...w(conv), message_id: sent[4]!.message_id });
      assert.deepEqual(await kit.store.readState.get(ref(conv), 'bob'), { last_read_seq: 0, unread_count: 5, has_unread: true });
      assert.deepEqual(await kit.store.readState.get(ref(conv), 'ann'), { last_read_seq: 0, unread_count: 2, has_unread: true });
      const marked = await kit.store.readState.markRead({ ...w(conv), user_id: 'bob', seq: 4 });
      assert.deepEqual(marked, { last_read_seq: 4, unread_count: 2, has_unread: true, changed: true });
      const detail = await kit.store.conversations.get(ref(conv), { kind: 'user', user_id: 'bob' }, 0);
      assert.deepEqual([detail?.unread_count, detail?.has_unread, detail?.last_read_seq], [2, true, 4]);
    });

    test('markers never move back and are clamped to last_seq', async (kit) => {
      const conv = await createConversation(kit, ['ann', 'bob']);
      for (let seq = 1; seq <= 3; seq += 1) await send(kit, conv, seq, 'ann');
      assert.equal((await kit.store.readState.markRead({ ...w(conv), user_id: 'bob', seq: 99 }))?.last_read_seq, 3);
      const back = await kit.store.readState.markRead({ ...w(conv), user_id: 'bob', seq: 1 });
      assert.deepEqual(back, { last_read_seq: 3, unread_count: 0, has_unread: false, changed: false });
      await send(kit, conv, 4, 'ann');
      assert.deepEqual(await kit.store.readState.get(ref(conv), 'bob'), { last_read_seq: 3, unread_count: 1, has_unread: true });
    });

    test('non-members and machines have no unread state in views', async (kit) => {
      const conv = await createConversation(kit, ['ann'], { type: 'CHANNEL' });
      await send(kit, conv, 1, 'ann');
      const outsider = await kit.store.conversations.get(ref(conv), { kind: 'user', user_id: 'bob' }, 0);
      assert.deepEqual([outsider?.my_role, outsider?.has_unread, outsider?.unread_count, outsider?.my_membership], [null, false, 0, null]);
      const machine = await kit.store.conversations.get(ref(conv), { kind: 'machine' }, 0);
      assert.deepEqual([machine?.my_role, machine?.has_unread], [null, false]);
    });
  });
}
