/**
 * The memos of the SQLite driver's exclusive mode (trigger-memo.ts: gate-cache.ts and the push
 * device lists): answers come from memory while nothing changed, and every kind of write shows at
 * the very next read, whichever write path (and trigger) made it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { GateCache } from '../../src/store/sqlite/gate-cache.ts';
import { createStore, sqliteStorePath } from '../../src/store/index.ts';
import type { SqliteChatStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { ThreadedSqliteStore } from '../../src/store/sqlite/writer-thread.ts';
import { createConversation, ref, send, w, type TestKit } from '../../src/store/contract/fixtures.ts';
import { tempDirs } from './helpers.ts';

const dir = tempDirs('chat-gate-cache');

type MemoStore = SqliteChatStore | ThreadedSqliteStore;

/** Both writers: inline (triggers and memo on one connection) and the writer thread (reported across). */
for (const writer of ['thread', 'inline'] as const) {
  async function withKit(mode: 'exclusive' | 'shared-file', body: (kit: TestKit, store: MemoStore) => Promise<void>): Promise<void> {
    const store = (await createStore({ driver: 'sqlite', path: sqliteStorePath(dir()), mode, writer })) as MemoStore;
    let n = 0;
    const at = (s: number): string => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
    const kit: TestKit = { store, ctx: { tenant_id: 'acme', application_id: 'app-1' }, tick: () => at((n += 1)), at };
    try {
      await body(kit, store);
    } finally {
      await store.close();
    }
  }

  describe(`SQLite gate cache (exclusive mode, ${writer} writer)`, () => {
    it('answers repeated gates from memory', async () => {
      await withKit('exclusive', async (kit, store) => {
        const conv = await createConversation(kit, ['ann', 'bob']);
        const first = await kit.store.conversations.gate(ref(conv), 'ann');
        const before = store.gateCacheStats()!;
        for (let i = 0; i < 5; i++) assert.deepEqual(await kit.store.conversations.gate(ref(conv), 'ann'), first);
        const after = store.gateCacheStats()!;
        assert.equal(after.hits - before.hits, 5);
        assert.equal(after.misses, before.misses);
      });
    });

    it('never answers a state a write has changed', async () => {
      await withKit('exclusive', async (kit) => {
        const conv = await createConversation(kit, ['ann', 'bob']);
        const gate = async (user: string | null) => kit.store.conversations.gate(ref(conv), user);
        const revision = async (): Promise<number> => (await gate(null))!.conversation.revision;

        // Membership: a stranger cached as nobody becomes a member, then leaves, then is removed.
        assert.equal((await gate('cat'))?.member_status, null);
        await kit.store.members.add({ ...w(conv), user_id: 'cat', role: 'MEMBER', member_id: 'm-cat' });
        assert.equal((await gate('cat'))?.member_status, 'ACTIVE');
        assert.equal((await gate('bob'))?.member_status, 'ACTIVE');
        await kit.store.members.setStatus({ ...w(conv), user_id: 'bob', status: 'LEFT' });
        assert.equal((await gate('bob'))?.member_status, 'LEFT');
        await kit.store.members.setStatus({ ...w(conv), user_id: 'cat', status: 'REMOVED' });
        assert.equal((await gate('cat'))?.member_status, 'REMOVED');

        // Everything a page shows moves the revision, through the append's UPDATE and the triggers.
        let r = await revision();
        const m = await send(kit, conv, 1, 'ann');
        assert.notEqual(await revision(), r, 'a send');
        r = await revision();
        await kit.store.messages.edit({ ...w(conv), message_id: m.message_id, body: 'edited' });
        assert.notEqual(await revision(), r, 'an edit');
        r = await revision();
        await kit.store.reactions.add({ ...w(conv), message_id: m.message_id, user_id: 'ann', emoji: '👍' });
        assert.notEqual(await revision(), r, 'a reaction');
        r = await revision();
        await kit.store.messages.tombstone({ ...w(conv), message_id: m.message_id });
        assert.notEqual(await revision(), r, 'a delete');
        r = await revision();
        assert.equal(await kit.store.messages.deleteExpired({ tenant_id: kit.ctx.tenant_id, days: 1, at: '2100-01-01T00:00:00.000Z' }), 1);
        assert.notEqual(await revision(), r, 'retention');

        // The conversation itself: archived, then deleted.
        await kit.store.conversations.update({ ...w(conv), patch: { status: 'ARCHIVED' } });
        assert.equal((await gate('ann'))?.conversation.status, 'ARCHIVED');
        await kit.store.conversations.softDelete({ ...w(conv) });
        assert.equal(await gate('ann'), null);
      });
    });

    it('a conversation cached as absent appears once created; a failed write changes nothing', async () => {
      await withKit('exclusive', async (kit) => {
        const id = '0190aaaa-0000-7000-8000-000000000001';
        const where = { ...kit.ctx, conversation_id: id };
        assert.equal(await kit.store.conversations.gate(where, 'ann'), null);
        const conv = await createConversation(kit, ['ann', 'bob'], { conversation_id: id });
        assert.equal((await kit.store.conversations.gate(where, 'ann'))?.conversation.conversation_id, conv.conversation_id);
        // Another context never sees it, cached or not.
        assert.equal(await kit.store.conversations.gate({ ...where, application_id: 'app-2' }, 'ann'), null);
        assert.equal(await kit.store.conversations.gate({ ...where, application_id: 'app-2' }, 'ann'), null);
        // A write refused by fencing (stale epoch) is rolled back: the answer stays right.
        const before = await kit.store.conversations.gate(where, 'ann');
        await assert.rejects(kit.store.members.setStatus({ ...w(conv), epoch: 0, user_id: 'ann', status: 'LEFT' }));
        assert.deepEqual(await kit.store.conversations.gate(where, 'ann'), before);
      });
    });

    it('answers are frozen: no caller can change what the next one gets', async () => {
      await withKit('exclusive', async (kit) => {
        const conv = await createConversation(kit, ['ann', 'bob']);
        const g = (await kit.store.conversations.gate(ref(conv), 'ann'))!;
        assert.throws(() => {
          (g.conversation as { revision: number }).revision = 99;
        }, TypeError);
      });
    });

    it('holds a bounded number of answers, the conversations cached first going first', () => {
      const db = new Database(':memory:');
      db.exec('CREATE TABLE conversations (conversation_id TEXT PRIMARY KEY); CREATE TABLE members (conversation_id TEXT, user_id TEXT)');
      const cache = new GateCache(db, 5, 3);
      const ref = (id: string) => ({ tenant_id: 't', application_id: 'a', conversation_id: id });
      let reads = 0;
      const read = () => (reads++, null);
      for (const user of ['u1', 'u2']) for (const id of ['c1', 'c2', 'c3']) cache.get(ref(id), user, read);
      assert.equal(reads, 6);
      assert.equal(cache.size, 4, 'c1 went first (5 answers at most)');
      cache.get(ref('c3'), 'u1', read);
      assert.equal(reads, 6, 'c3 is still cached');
      cache.get(ref('c1'), 'u1', read);
      assert.equal(reads, 7, 'c1 was read again');
      for (const user of ['u3', 'u4']) cache.get(ref('c1'), user, read);
      assert.ok(cache.size <= 5);
      // A row change drops the conversation's answers, whatever statement made it.
      cache.get(ref('c1'), 'u1', read);
      const before = reads;
      db.prepare("INSERT INTO members VALUES ('c1', 'u9')").run();
      cache.get(ref('c1'), 'u1', read);
      assert.equal(reads, before + 1);
      db.close();
    });

    it('shared-file mode has no cache (other processes write the file)', async () => {
      await withKit('shared-file', async (_kit, store) => {
        assert.equal(store.gateCacheStats(), null);
      });
    });
  });

  describe(`SQLite profile memo (exclusive mode, ${writer} writer)`, () => {
    it('answers a single profile from memory until its row changes', async () => {
      await withKit('exclusive', async (kit, store) => {
        const profiles = kit.store.profiles;
        assert.deepEqual(await profiles.get('acme', ['ann']), [], 'unknown: cached as absent');
        await profiles.upsert('acme', [{ user_id: 'ann', display_name: null, avatar_url: null }], 'hint', kit.at(1));
        assert.deepEqual((await profiles.get('acme', ['ann'])).map((p) => p.display_name), [null], 'a new row shows at once');
        await profiles.upsert('acme', [{ user_id: 'ann', display_name: 'Ann', avatar_url: null }], 'hint', kit.at(2));
        assert.deepEqual((await profiles.get('acme', ['ann'])).map((p) => p.display_name), ['Ann'], 'a hint filling a blank shows');
        const before = store.profileCacheStats()!;
        assert.deepEqual((await profiles.get('acme', ['ann'])).map((p) => p.display_name), ['Ann']);
        assert.equal(store.profileCacheStats()!.hits - before.hits, 1, 'from memory');
        await profiles.upsert('acme', [{ user_id: 'ann', display_name: 'Ann Archer', avatar_url: 'https://img/ann' }], 'idp', kit.at(3));
        const [ann] = await profiles.get('acme', ['ann']);
        assert.deepEqual([ann?.display_name, ann?.avatar_url], ['Ann Archer', 'https://img/ann'], 'the identity provider\'s change shows');
        assert.throws(() => {
          (ann as { display_name: string }).display_name = 'x';
        }, TypeError, 'answers are frozen');
        assert.deepEqual(await profiles.get('other', ['ann']), [], 'another tenant has its own');
      });
    });

    it('shared-file mode has no profile memo', async () => {
      await withKit('shared-file', async (_kit, store) => {
        assert.equal(store.profileCacheStats(), null);
      });
    });
  });

  describe(`SQLite push device memo (exclusive mode, ${writer} writer)`, () => {
    const web = (user_id: string, n: number) => ({ tenant_id: 'acme', user_id, platform: 'web' as const, token_or_endpoint: `https://push.example/${n}`, p256dh: 'k', auth: 'a' });
    const tokens = (devices: { user_id: string; token_or_endpoint: string }[]) => devices.map((d) => `${d.user_id}:${d.token_or_endpoint.slice(-1)}`);

    it('answers from memory until a device of that user is registered, moved, unregistered or pruned', async () => {
      await withKit('exclusive', async (kit, store) => {
        const devices = kit.store.pushDevices;
        await devices.upsert(web('bob', 1), kit.at(1));
        await devices.upsert(web('ann', 2), kit.at(2));
        await devices.upsert(web('ann', 3), kit.at(3));
        assert.deepEqual(tokens(await devices.listForUsers('acme', ['bob', 'ann', 'cat'])), ['ann:2', 'ann:3', 'bob:1'], 'by user, then registration');
        const before = store.deviceCacheStats()!;
        assert.deepEqual(tokens(await devices.listForUsers('acme', ['ann', 'bob'])), ['ann:2', 'ann:3', 'bob:1']);
        assert.equal(store.deviceCacheStats()!.hits - before.hits, 2);

        await devices.upsert(web('cat', 4), kit.at(4));
        assert.deepEqual(tokens(await devices.listForUsers('acme', ['cat'])), ['cat:4'], 'a new registration shows at once');
        await devices.upsert(web('bob', 2), kit.at(5)); // ann's endpoint 2 re-registered by bob
        assert.deepEqual(tokens(await devices.listForUsers('acme', ['ann', 'bob'])), ['ann:3', 'bob:1', 'bob:2'], 'a device that changed hands left its old owner');
        assert.equal(await devices.delete('acme', 'ann', 'https://push.example/3'), true);
        assert.deepEqual(tokens(await devices.listForUsers('acme', ['ann'])), [], 'unregistered');
        assert.equal(await devices.deleteEndpoint('https://push.example/1'), 1);
        assert.deepEqual(tokens(await devices.listForUsers('acme', ['bob'])), ['bob:2'], 'pruned (gone at the push service)');
        assert.deepEqual(await devices.listForUsers('other', ['bob']), [], 'another tenant has its own');
      });
    });

    it('shared-file mode has no device memo', async () => {
      await withKit('shared-file', async (_kit, store) => {
        assert.equal(store.deviceCacheStats(), null);
      });
    });
  });
}
