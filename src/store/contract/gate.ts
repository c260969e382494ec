/** Contract: the gate (access check of reads inside a conversation) and the revision it answers. */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { createConversation, ref, send, storeTest, w, type MakeStore } from './fixtures.ts';

export function gateContract(make: MakeStore): void {
  const test = storeTest(make);

  describe('gate and revision', () => {
    test('answers the live conversation and the membership status of the user asked', async (kit) => {
      const conv = await createConversation(kit, ['ann', 'bob']);
      const forAnn = await kit.store.conversations.gate(ref(conv), 'ann');
      assert.equal(forAnn?.conversation.conversation_id, conv.conversation_id);
      assert.equal(forAnn?.member_status, 'ACTIVE');
      assert.equal((await kit.store.conversations.gate(ref(conv), 'zed'))?.member_status, null);
      assert.equal((await kit.store.conversations.gate(ref(conv), null))?.member_status, null);
      await kit.store.members.setStatus({ ...w(conv), user_id: 'bob', status: 'LEFT' });
      assert.equal((await kit.store.conversations.gate(ref(conv), 'bob'))?.member_status, 'LEFT');
      assert.equal(await kit.store.conversations.gate({ ...ref(conv), application_id: 'other-app' }, 'ann'), null);
      await kit.store.conversations.softDelete({ ...w(conv) });
      assert.equal(await kit.store.conversations.gate(ref(conv), 'ann'), null);
    });

    test('the revision moves with every write a history page shows, and only then', async (kit) => {
      const conv = await createConversation(kit, ['ann', 'bob']);
      const seen = [(await kit.store.conversations.gate(ref(conv), null))!.conversation.revision];
      const moved = async (what: string): Promise<void> => {
        const r = (await kit.store.conversations.gate(ref(conv), null))!.conversation.revision;
        assert.notEqual(r, seen[seen.length - 1], `revision did not move after ${what}`);
        assert.ok(!seen.includes(r), `revision came back to an earlier value after ${what}`);
        seen.push(r);
      };
      const m = await send(kit, conv, 1, 'ann');
      await moved('a send');
      await kit.store.messages.edit({ ...w(conv), message_id: m.message_id, body: 'edited' });
      await moved('an edit');
      await kit.store.reactions.add({ ...w(conv), message_id: m.message_id, user_id: 'bob', emoji: '👍' });
      await moved('a reaction');
      await kit.store.reactions.remove({ ...w(conv), message_id: m.message_id, user_id: 'bob', emoji: '👍' });
      await moved('a reaction removed');
      await kit.store.messages.tombstone({ ...w(conv), message_id: m.message_id });
      await moved('a delete');
      await kit.store.messages.list({ ...ref(conv), viewer_user_id: 'ann', limit: 10 });
      await kit.store.readState.markRead({ ...w(conv), user_id: 'bob', seq: 1 });
      const still = (await kit.store.conversations.gate(ref(conv), null))!.conversation.revision;
      assert.equal(still, seen[seen.length - 1], 'reads and read markers do not change what a page shows');
    });
  });
}
