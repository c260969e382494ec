/** Contract: conversation listings for users and machines, keyset paging, positions. */
import assert from 'node:assert/strict';
import { describe } from 'node:test';
import { InvalidPositionError } from '../errors.ts';
import type { ConversationPosition, ConversationView, Page, StoreContext, Viewer } from '../types.ts';
import { createConversation, send, storeTest, w, type MakeStore, type TestKit } from './fixtures.ts';

async function listAll(kit: TestKit, viewer: Viewer, limit: number, type?: 'DIRECT' | 'GROUP' | 'CHANNEL', ctx: StoreContext = kit.ctx): Promise<string[]> {
  const ids: string[] = [];
  let after: ConversationPosition | null = null;
  for (let guard = 0; guard < 100; guard += 1) {
    const page: Page<ConversationView, ConversationPosition> = await kit.store.conversations.list({
      ...ctx, viewer, limit, after, members_preview: 0, ...(type ? { type } : {}),
    });
    assert.ok(page.items.length <= limit);
    ids.push(...page.items.map((c) => c.conversation_id));
    if (!page.next) return ids;
    assert.equal(page.items.length, limit, 'only the last page may be short');
    after = page.next;
  }
  throw new Error('paging did not end');
}

export function listingContract(make: MakeStore): void {
  const test = storeTest(make);

  describe('conversation listing', () => {
    test('most recent activity first; ties broken by conversation_id DESC; pages exact over ties', async (kit) => {
      const same = kit.at(100);
      const tied = [];
      for (let i = 0; i < 7; i += 1) tied.push(await createConversation(kit, ['ann'], { at: same }));
      const older = await createConversation(kit, ['ann'], { at: kit.at(50) });
      const newer = await createConversation(kit, ['ann'], { at: kit.at(200) });
      const expected = [newer.conversation_id, ...tied.map((c) => c.conversation_id).sort().reverse(), older.conversation_id];
      for (const limit of [1, 3, 4, 9, 100]) {
        assert.deepEqual(await listAll(kit, { kind: 'machine' }, limit), expected, `limit ${limit}`);
        assert.deepEqual(await listAll(kit, { kind: 'user', user_id: 'ann' }, limit), expected, `user, limit ${limit}`);
      }
    });

    test('a new message moves its conversation to the top', async (kit) => {
      const a = await createConversation(kit, ['ann'], { at: kit.at(10) });
      const b = await createConversation(kit, ['ann'], { at: kit.at(20) });
      assert.deepEqual(await listAll(kit, { kind: 'machine' }, 10), [b.conversation_id, a.conversation_id]);
      await send(kit, a, 1, 'ann', { at: kit.at(30) });
      const page = await kit.store.conversations.list({ ...kit.ctx, viewer: { kind: 'machine' }, limit: 10, members_preview: 0 });
      assert.deepEqual(page.items.map((c) => c.conversation_id), [a.conversation_id, b.conversation_id]);
      assert.equal(page.items[0]?.last_activity_at, kit.at(30));
      assert.equal(page.items[0]?.last_seq, 1);
    });

    test('users see their ACTIVE memberships plus PUBLIC channels; machines see all', async (kit) => {
      const mine = await createConversation(kit, ['ann', 'bob']);
      const direct = await createConversation(kit, ['bob', 'ann'], { type: 'DIRECT' });
      const publicJoined = await createConversation(kit, ['ann'], { type: 'CHANNEL' });
      const publicOther = await createConversation(kit, ['bob'], { type: 'CHANNEL' });
      const privateOther = await createConversation(kit, ['bob'], { type: 'CHANNEL', visibility: 'PRIVATE' });
      const notMine = await createConversation(kit, ['bob', 'cid']);
      const leftOne = await createConversation(kit, ['bob', 'ann']);
      await kit.store.members.setStatus({ ...w(leftOne), user_id: 'ann', status: 'LEFT' });
      await createConversation(kit, ['ann'], { ctx: { ...kit.ctx, application_id: 'app-2' } });

      const seen = new Set(await listAll(kit, { kind: 'user', user_id: 'ann' }, 2));
      assert.deepEqual(seen, new Set([mine, direct, publicJoined, publicOther].map((c) => c.conversation_id)));
      const all = await listAll(kit, { kind: 'machine' }, 3);
      assert.equal(all.length, 7);
      assert.ok(all.includes(privateOther.conversation_id) && all.includes(notMine.conversation_id));

      const page = await kit.store.conversations.list({ ...kit.ctx, viewer: { kind: 'user', user_id: 'ann' }, limit: 10, members_preview: 0 });
      const role = new Map(page.items.map((c) => [c.conversation_id, c.my_role]));
      assert.equal(role.get(mine.conversation_id), 'OWNER');
      assert.equal(role.get(publicJoined.conversation_id), 'OWNER');
      assert.equal(role.get(publicOther.conversation_id), null);
      const machine = await kit.store.conversations.list({ ...kit.ctx, viewer: { kind: 'machine' }, limit: 10, members_preview: 0 });
      assert.ok(machine.items.every((c) => c.my_role === null && c.has_unread === false));
    });

    test('the type filter applies to both halves of a user listing', async (kit) => {
      const group = await createConversation(kit, ['ann', 'bob']);
      const channel = await createConversation(kit, ['bob'], { type: 'CHANNEL' });
      const direct = await createConversation(kit, ['ann', 'bob'], { type: 'DIRECT' });
      const user: Viewer = { kind: 'user', user_id: 'ann' };
      assert.deepEqual(await listAll(kit, user, 5, 'GROUP'), [group.conversation_id]);
      assert.deepEqual(await listAll(kit, user, 5, 'CHANNEL'), [channel.conversation_id]);
      assert.deepEqual(await listAll(kit, user, 5, 'DIRECT'), [direct.conversation_id]);
      assert.deepEqual(await listAll(kit, { kind: 'machine' }, 5, 'CHANNEL'), [channel.conversation_id]);
    });

    test('has_unread follows messages of others past the read marker', async (kit) => {
      const conv = await createConversation(kit, ['ann', 'bob']);
      const unread = async (user_id: string): Promise<boolean | undefined> =>
        (await kit.store.conversations.list({ ...kit.ctx, viewer: { kind: 'user', user_id }, limit: 5, members_preview: 0 })).items[0]?.has_unread;
      assert.equal(await unread('ann'), false);
      await send(kit, conv, 1, 'ann');
      assert.equal(await unread('ann'), false, 'own messages are never unread');
      assert.equal(await unread('bob'), true);
      await kit.store.readState.markRead({ ...w(conv), user_id: 'bob', seq: 1 });
      assert.equal(await unread('bob'), false);
    });

    test('members preview: first ACTIVE members with profiles for DIRECT/GROUP, none for CHANNEL', async (kit) => {
      await kit.store.profiles.upsert(kit.ctx.tenant_id, [{ user_id: 'bob', display_name: 'Bob', avatar_url: 'https://a/b.png' }], 'idp');
      const group = await createConversation(kit, ['ann', 'bob', 'cid', 'dan']);
      await kit.store.members.setStatus({ ...w(group), user_id: 'bob', status: 'REMOVED' });
      await createConversation(kit, ['ann', 'bob'], { type: 'CHANNEL' });
      const page = await kit.store.conversations.list({ ...kit.ctx, viewer: { kind: 'machine' }, limit: 5, members_preview: 2 });
      const byType = new Map(page.items.map((c) => [c.type, c.members]));
      assert.deepEqual(byType.get('GROUP'), [
        { user_id: 'ann', display_name: null, avatar_url: null },
        { user_id: 'cid', display_name: null, avatar_url: null },
      ]);
      assert.equal(byType.get('CHANNEL'), null);
      const direct = await createConversation(kit, ['ann', 'bob'], { type: 'DIRECT' });
      const got = await kit.store.conversations.get({ ...kit.ctx, conversation_id: direct.conversation_id }, { kind: 'machine' }, 10);
      assert.deepEqual(got?.members, [
        { user_id: 'ann', display_name: null, avatar_url: null },
        { user_id: 'bob', display_name: 'Bob', avatar_url: 'https://a/b.png' },
      ]);
    });

    test('malformed positions are InvalidPositionError; bad limits RangeError', async (kit) => {
      const list = (after: unknown, limit = 10): Promise<unknown> =>
        kit.store.conversations.list({ ...kit.ctx, viewer: { kind: 'machine' }, limit, members_preview: 0, after: after as ConversationPosition });
      const good = { last_activity_at: kit.at(1), conversation_id: '0b6f4a36-3c1e-4c55-9f5e-3f2f0a4b1c2d' };
      await list(good);
      for (const bad of [
        'cursor', 42, [], {}, { last_activity_at: kit.at(1) }, { ...good, extra: 1 },
        { ...good, last_activity_at: '2026-01-01' }, { ...good, last_activity_at: 1 }, { ...good, conversation_id: 'not-a-uuid' },
        { ...good, conversation_id: "x' OR 1=1 --" },
      ]) {
        await assert.rejects(list(bad), InvalidPositionError, JSON.stringify(bad));
      }
      for (const limit of [0, -1, 1.5, 1001]) await assert.rejects(list(null, limit), RangeError);
    });
  });
}
