/** Contract: membership changes, member_count, members pages. */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe } from 'node:test';
import { InvalidPositionError } from '../errors.ts';
import type { MemberPosition } from '../types.ts';
import { createConversation, ref, send, storeTest, w, type MakeStore } from './fixtures.ts';

export function memberContract(make: MakeStore): void {
  const test = storeTest(make);

  describe('members', () => {
    test('add, leave and re-add keep one row per user and member_count exact', async (kit) => {
      const conv = await createConversation(kit, ['ann']);
      const count = async (): Promise<number | undefined> => (await kit.store.conversations.get(ref(conv), { kind: 'machine' }, 0))?.member_count;
      const added = await kit.store.members.add({ ...w(conv, kit.tick()), member_id: randomUUID(), user_id: 'bob', role: 'MEMBER' });
      assert.equal(added?.changed, true);
      assert.equal(added?.member.status, 'ACTIVE');
      assert.equal(await count(), 2);

      const again = await kit.store.members.add({ ...w(conv), member_id: randomUUID(), user_id: 'bob', role: 'ADMIN' });
      assert.equal(again?.changed, false);
      assert.deepEqual(again?.member, added?.member);
      assert.equal(await count(), 2);

      const left = await kit.store.members.setStatus({ ...w(conv, kit.tick()), user_id: 'bob', status: 'LEFT' });
      assert.equal(left?.changed, true);
      assert.equal(left?.member.status, 'LEFT');
      assert.equal(await count(), 1);
      const twice = await kit.store.members.setStatus({ ...w(conv), user_id: 'bob', status: 'REMOVED' });
      assert.equal(twice?.changed, false);
      assert.equal(twice?.member.status, 'LEFT');
      assert.equal(await count(), 1);

      const rejoinAt = kit.tick();
      const back = await kit.store.members.add({ ...w(conv, rejoinAt), member_id: randomUUID(), user_id: 'bob', role: 'ADMIN' });
      assert.equal(back?.changed, true);
      assert.equal(back?.member.member_id, added?.member.member_id, 'the same row is reactivated');
      assert.equal(back?.member.role, 'ADMIN');
      assert.equal(back?.member.joined_at, rejoinAt);
      assert.equal(await count(), 2);
    });

    test('missing conversation or member answers null', async (kit) => {
      const conv = await createConversation(kit, ['ann']);
      const unknown = { ...kit.ctx, conversation_id: randomUUID(), epoch: 1 };
      assert.equal(await kit.store.members.add({ ...unknown, member_id: randomUUID(), user_id: 'bob', role: 'MEMBER' }), null);
      assert.equal(await kit.store.members.setStatus({ ...w(conv), user_id: 'nobody', status: 'LEFT' }), null);
      assert.equal(await kit.store.members.setRole({ ...w(conv), user_id: 'nobody', role: 'ADMIN' }), null);
      assert.equal(await kit.store.members.get(ref(conv), 'nobody'), null);
      await kit.store.conversations.softDelete(w(conv));
      assert.equal(await kit.store.members.get(ref(conv), 'ann'), null);
    });

    test('setRole changes an ACTIVE member only', async (kit) => {
      const conv = await createConversation(kit, ['ann', 'bob']);
      assert.equal((await kit.store.members.setRole({ ...w(conv), user_id: 'bob', role: 'ADMIN' }))?.role, 'ADMIN');
      await kit.store.members.setStatus({ ...w(conv), user_id: 'bob', status: 'REMOVED' });
      assert.equal(await kit.store.members.setRole({ ...w(conv), user_id: 'bob', role: 'OWNER' }), null);
    });

    test('pages by joined_at then member_id, ACTIVE only unless asked, with profiles', async (kit) => {
      await kit.store.profiles.upsert(kit.ctx.tenant_id, [{ user_id: 'u3', display_name: 'User Three', avatar_url: null }], 'idp');
      const conv = await createConversation(kit, ['u0', 'u1', 'u2', 'u3', 'u4'], { at: kit.at(10) });
      const late = await kit.store.members.add({ ...w(conv, kit.at(20)), member_id: randomUUID(), user_id: 'u5', role: 'MEMBER' });
      await kit.store.members.setStatus({ ...w(conv, kit.at(30)), user_id: 'u1', status: 'LEFT' });
      const walk = async (include_inactive: boolean, limit: number): Promise<string[]> => {
        const users: string[] = [];
        let after: MemberPosition | null = null;
        for (;;) {
          const page = await kit.store.members.list({ ...ref(conv), limit, after, include_inactive });
          assert.ok(page);
          users.push(...page.items.map((m) => m.user_id));
          if (!page.next) return users;
          after = page.next;
        }
      };
      for (const limit of [1, 2, 10]) {
        assert.deepEqual(await walk(false, limit), ['u0', 'u2', 'u3', 'u4', 'u5']);
        assert.deepEqual(await walk(true, limit), ['u0', 'u1', 'u2', 'u3', 'u4', 'u5']);
      }
      const first = await kit.store.members.list({ ...ref(conv), limit: 10 });
      assert.equal(first?.items.find((m) => m.user_id === 'u3')?.display_name, 'User Three');
      assert.equal(first?.items.find((m) => m.user_id === 'u5')?.member_id, late?.member.member_id);
      await assert.rejects(kit.store.members.list({ ...ref(conv), limit: 10, after: { joined_at: 'x', member_id: 'y' } }), InvalidPositionError);
    });

    test('filterActive and conversationIdsOf answer ACTIVE memberships only', async (kit) => {
      const group = await createConversation(kit, ['ann', 'bob', 'cid']);
      await kit.store.members.setStatus({ ...w(group), user_id: 'cid', status: 'REMOVED' });
      assert.deepEqual((await kit.store.members.filterActive(ref(group), ['ann', 'cid', 'zed'])).sort(), ['ann']);
      const channel = await createConversation(kit, ['ann'], { type: 'CHANNEL' });
      const gone = await createConversation(kit, ['ann'], { type: 'CHANNEL' });
      await kit.store.conversations.softDelete(w(gone));
      assert.deepEqual(await kit.store.members.conversationIdsOf(kit.ctx, 'ann', 'CHANNEL'), [channel.conversation_id]);
      assert.deepEqual(
        await kit.store.members.conversationIdsOf(kit.ctx, 'ann'),
        [group.conversation_id, channel.conversation_id].sort(),
      );
      assert.deepEqual(await kit.store.members.conversationIdsOf(kit.ctx, 'cid'), []);
    });

    test("a joining member's earlier history is not unread", async (kit) => {
      const conv = await createConversation(kit, ['ann']);
      await send(kit, conv, 1, 'ann');
      await send(kit, conv, 2, 'ann');
      await kit.store.members.add({ ...w(conv), member_id: randomUUID(), user_id: 'bob', role: 'MEMBER' });
      assert.deepEqual(await kit.store.readState.get(ref(conv), 'bob'), { last_read_seq: 2, unread_count: 0, has_unread: false });
      await send(kit, conv, 3, 'ann');
      assert.deepEqual(await kit.store.readState.get(ref(conv), 'bob'), { last_read_seq: 2, unread_count: 1, has_unread: true });
    });
  });
}
