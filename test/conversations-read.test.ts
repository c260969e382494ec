/**
 * Reading conversations, history and members over HTTP. Until conversation actors serve the write
 * routes, the data is written by a second store instance on the node's own SQLite file
 * (shared-file mode): real files, real node, real tokens.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createStore, sqliteStorePath, type ChatStore } from '../src/store/index.ts';
import { assertErrorBody, bearer, request } from './helpers/http.ts';
import { startTestNode, type TestNode } from './helpers/processes.ts';
import { machineToken, userToken } from './helpers/tokens.ts';

let node: TestNode;
let store: ChatStore;
const tok: Record<string, string> = {};
const ctx = { tenant_id: 'acme', application_id: 'support' };
const ids = { direct: crypto.randomUUID(), group: crypto.randomUUID(), channel: crypto.randomUUID(), internal: crypto.randomUUID() };
const base = () => `${node.api}/tenants/acme/applications/support`;
const member = (user_id: string, role: 'OWNER' | 'MEMBER' = 'MEMBER') => ({ member_id: crypto.randomUUID(), user_id, role });
const iso = (ms: number) => new Date(ms).toISOString();

before(async () => {
  node = await startTestNode({ CHAT_SQLITE_MODE: 'shared-file' });
  store = await createStore({ driver: 'sqlite', mode: 'shared-file', path: sqliteStorePath(node.dataDir) });
  const t0 = Date.parse('2026-01-01T00:00:00.000Z');
  const conv = (conversation_id: string, type: 'DIRECT' | 'GROUP' | 'CHANNEL', members: ReturnType<typeof member>[], at: number, name: string | null = null) =>
    store.conversations.create({ ...ctx, conversation_id, type, name, description: null, created_by_user_id: members[0]!.user_id, created_by_client_id: null, members, at: iso(at) });
  await conv(ids.direct, 'DIRECT', [member('bob'), member('carol')], t0 + 1000);
  await conv(ids.group, 'GROUP', [member('bob', 'OWNER'), member('frank')], t0 + 2000, 'Team');
  await conv(ids.channel, 'CHANNEL', [member('carol', 'OWNER')], t0 + 3000, 'general');
  await store.conversations.create({ tenant_id: 'acme', application_id: 'internal', conversation_id: ids.internal, type: 'GROUP', name: 'Internal', description: null, created_by_user_id: 'grace', created_by_client_id: null, members: [member('grace', 'OWNER')], at: iso(t0) });
  // 7 GROUP conversations with the same activity time, to page over ties.
  for (let i = 0; i < 7; i++) await conv(crypto.randomUUID(), 'GROUP', [member('alice', 'OWNER'), member('bob')], t0 + 500, `tie ${i}`);
  // History in the DIRECT: 5 messages, the 3rd deleted.
  const msgs: string[] = [];
  for (let seq = 1; seq <= 5; seq++) {
    const message_id = crypto.randomUUID();
    msgs.push(message_id);
    await store.messages.append({ ...ctx, conversation_id: ids.direct, epoch: 1, message_id, seq, sender_user_id: seq % 2 ? 'bob' : 'carol', sender_client_id: null, body: `hello ${seq}`, message_type: 'TEXT', at: iso(t0 + 10_000 + seq) });
  }
  await store.messages.tombstone({ ...ctx, conversation_id: ids.direct, epoch: 1, message_id: msgs[2]! });
  // Profiles as the service learns them from the IdP (the write routes will record them).
  await store.profiles.upsert('acme', [{ user_id: 'bob', display_name: 'Bob Baker', avatar_url: null }], 'idp');
  tok.bob = await userToken(node.idp, 'bob');
  tok.carol = await userToken(node.idp, 'carol');
  tok.frank = await userToken(node.idp, 'frank');
  tok.machine = await machineToken(node.idp);
});
after(async () => {
  await store.close();
  await node.stop();
});

const get = (path: string, token: string) => request(`${base()}${path}`, { headers: bearer(token) });

describe('GET conversations', () => {
  test('a user sees their conversations plus PUBLIC channels, most recently active first', async () => {
    const res = await get('/conversations?limit=100', tok.bob!);
    assert.equal(res.status, 200, res.text);
    const items = res.json().items as Record<string, unknown>[];
    const mine = items.map((c) => c.conversation_id);
    assert.equal(mine[0], ids.direct, 'the DIRECT has the newest message');
    assert.ok(mine.includes(ids.group) && mine.includes(ids.channel));
    assert.ok(!mine.includes(ids.internal), 'another application is never listed');
    assert.equal(items.length, 10);
    const channel = items.find((c) => c.conversation_id === ids.channel)!;
    assert.equal('members' in channel, false, 'members are omitted for CHANNEL');
    assert.equal(channel.my_role, null, 'bob is not a member of the public channel');
    const direct = items.find((c) => c.conversation_id === ids.direct)!;
    assert.deepEqual((direct.members as { user_id: string }[]).map((m) => m.user_id).sort(), ['bob', 'carol']);
    assert.equal(direct.my_role, 'MEMBER');
    assert.equal(typeof direct.has_unread, 'boolean');
    assert.equal(res.json().next_cursor, null);
  });

  test('machines see every conversation of the context, without viewer fields', async () => {
    const res = await get('/conversations?limit=100', tok.machine!);
    const items = res.json().items as Record<string, unknown>[];
    assert.equal(items.length, 10);
    for (const c of items) assert.equal('my_role' in c || 'has_unread' in c, false);
  });

  test('paging over tied activity times is stable: every conversation once', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await get(`/conversations?limit=3${cursor ? `&before=${encodeURIComponent(cursor)}` : ''}`, tok.bob!);
      assert.equal(res.status, 200, res.text);
      seen.push(...(res.json().items as { conversation_id: string }[]).map((c) => c.conversation_id));
      cursor = res.json().next_cursor;
      pages++;
    } while (cursor && pages < 10);
    assert.equal(seen.length, 10);
    assert.equal(new Set(seen).size, 10);
  });

  test('type filter, and an unknown type is invalid_request', async () => {
    const res = await get('/conversations?type=CHANNEL', tok.bob!);
    assert.deepEqual((res.json().items as { type: string }[]).map((c) => c.type), ['CHANNEL']);
    assertErrorBody(await get('/conversations?type=SECRET', tok.bob!), 400, 'invalid_request');
  });

  test('limit: capped at 100, non-positive-integers are invalid_limit', async () => {
    assert.equal((await get('/conversations?limit=1000', tok.bob!)).status, 200);
    for (const l of ['0', '-1', 'abc', '2.5', '']) assertErrorBody(await get(`/conversations?limit=${l}`, tok.bob!), 400, 'invalid_limit');
  });

  test("tampered cursors, and another viewer's cursor, are invalid_cursor", async () => {
    const cursor = (await get('/conversations?limit=2', tok.bob!)).json().next_cursor as string;
    assertErrorBody(await get(`/conversations?before=${encodeURIComponent(`${cursor}x`)}`, tok.bob!), 400, 'invalid_cursor');
    assertErrorBody(await get(`/conversations?before=garbage`, tok.bob!), 400, 'invalid_cursor');
    assertErrorBody(await get(`/conversations?before=${encodeURIComponent(cursor)}`, tok.carol!), 400, 'invalid_cursor');
    assertErrorBody(await get(`/conversations?type=GROUP&before=${encodeURIComponent(cursor)}`, tok.bob!), 400, 'invalid_cursor');
  });
});

describe('GET one conversation, its messages and members', () => {
  test('members get the conversation with an exact unread count', async () => {
    const res = await get(`/conversations/${ids.direct}`, tok.carol!);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json().type, 'DIRECT');
    assert.equal(typeof res.json().unread_count, 'number');
  });

  test('history is newest first, with the tombstone, paged by cursor', async () => {
    // Carol's calls above taught the node her profile; that write is not on the calls' path (best
    // effort, node.ts onProfile), so on a busy machine it may land a moment after them.
    for (let tries = 0; (await store.profiles.get('acme', ['carol']))[0]?.display_name == null; tries += 1) {
      assert.ok(tries < 100, "carol's profile is stored within 5 s of her calls");
      await new Promise((r) => setTimeout(r, 50));
    }
    const first = await get(`/conversations/${ids.direct}/messages?limit=3`, tok.bob!);
    assert.equal(first.status, 200, first.text);
    const a = first.json().items as { body: string; status: string; seq: number; sender: { display_name: string } }[];
    assert.deepEqual(a.map((m) => m.seq), [5, 4, 3]);
    assert.equal(a[2]!.status, 'DELETED');
    assert.equal(a[2]!.body, '');
    assert.equal(a[0]!.sender.display_name, 'Bob Baker');
    assert.equal(a[1]!.sender.display_name, 'Carol Chen', "carol's profile was learned from the IdP when she called");
    const next = await get(`/conversations/${ids.direct}/messages?limit=3&before=${encodeURIComponent(first.json().next_cursor)}`, tok.bob!);
    assert.deepEqual((next.json().items as { seq: number }[]).map((m) => m.seq), [2, 1]);
    assert.equal(next.json().next_cursor, null);
    // A cursor of one conversation is refused on another.
    assertErrorBody(await get(`/conversations/${ids.group}/messages?before=${encodeURIComponent(first.json().next_cursor)}`, tok.bob!), 400, 'invalid_cursor');
  });

  test('non-members are not_conversation_member; PUBLIC channels are readable by all', async () => {
    assertErrorBody(await get(`/conversations/${ids.direct}/messages`, tok.frank!), 403, 'not_conversation_member');
    assertErrorBody(await get(`/conversations/${ids.direct}`, tok.frank!), 403, 'not_conversation_member');
    assert.equal((await get(`/conversations/${ids.channel}/messages`, tok.bob!)).status, 200);
  });

  test('unknown ids and conversations of another application are not_found', async () => {
    assertErrorBody(await get(`/conversations/${crypto.randomUUID()}/messages`, tok.bob!), 404, 'not_found');
    assertErrorBody(await get(`/conversations/not-a-uuid`, tok.bob!), 404, 'not_found');
    assertErrorBody(await get(`/conversations/${ids.internal}`, tok.machine!), 404, 'not_found');
    assertErrorBody(await get(`/conversations/${ids.internal}/members`, tok.machine!), 404, 'not_found');
  });

  test('members list (joining order; ties by member id) with profiles', async () => {
    const res = await get(`/conversations/${ids.group}/members`, tok.frank!);
    assert.equal(res.status, 200, res.text);
    const items = res.json().items as { user_id: string; display_name: string; role: string; status: string }[];
    assert.deepEqual(items.map((m) => [m.user_id, m.role, m.status]).sort(), [['bob', 'OWNER', 'ACTIVE'], ['frank', 'MEMBER', 'ACTIVE']]);
    assert.equal(items.find((m) => m.user_id === 'frank')!.display_name, 'frank', 'falls back to the user id');
    assert.equal(items.find((m) => m.user_id === 'bob')!.display_name, 'Bob Baker');
  });
});

describe('history pages served from the page cache', () => {
  test('a repeated page follows every write another writer makes to the file: sends, edits, reactions per viewer, deletes', async () => {
    const conversation_id = crypto.randomUUID();
    await store.conversations.create({ ...ctx, conversation_id, type: 'GROUP', name: 'cache', description: null, created_by_user_id: 'bob', created_by_client_id: null, members: [member('bob', 'OWNER'), member('frank')] });
    const w = { ...ctx, conversation_id, epoch: 1 };
    const first = crypto.randomUUID();
    await store.messages.append({ ...w, message_id: first, seq: 1, sender_user_id: 'bob', sender_client_id: null, body: 'one', message_type: 'TEXT' });
    type Item = { seq: number; body: string; status: string; reactions: { emoji: string; count: number; reacted_by_me: boolean }[] };
    const page = async (token: string): Promise<Item[]> => {
      const res = await get(`/conversations/${conversation_id}/messages?limit=10`, token);
      assert.equal(res.status, 200, res.text);
      return res.json().items as Item[];
    };
    assert.deepEqual((await page(tok.bob!)).map((m) => m.body), ['one']);
    assert.deepEqual((await page(tok.bob!)).map((m) => m.body), ['one'], 'a repeat answers the same');

    await store.messages.append({ ...w, message_id: crypto.randomUUID(), seq: 2, sender_user_id: 'frank', sender_client_id: null, body: 'two', message_type: 'TEXT' });
    assert.deepEqual((await page(tok.bob!)).map((m) => m.body), ['two', 'one'], 'a send shows at once');

    await store.messages.edit({ ...w, message_id: first, body: 'one, edited' });
    assert.deepEqual((await page(tok.bob!)).map((m) => [m.body, m.status]), [['two', 'ACTIVE'], ['one, edited', 'EDITED']], 'an edit shows at once');

    await store.reactions.add({ ...w, message_id: first, user_id: 'frank', emoji: '👍' });
    for (let i = 0; i < 2; i += 1) {
      assert.deepEqual((await page(tok.frank!))[1]!.reactions, [{ emoji: '👍', count: 1, reacted_by_me: true }], 'the reactor sees reacted_by_me');
      assert.deepEqual((await page(tok.bob!))[1]!.reactions, [{ emoji: '👍', count: 1, reacted_by_me: false }], 'another viewer does not, from the cache too');
    }
    await store.reactions.remove({ ...w, message_id: first, user_id: 'frank', emoji: '👍' });
    assert.deepEqual((await page(tok.frank!))[1]!.reactions, [], 'a removed reaction goes at once');

    await store.messages.tombstone({ ...w, message_id: first });
    const after = await page(tok.bob!);
    assert.deepEqual([after[1]!.status, after[1]!.body], ['DELETED', ''], 'a delete shows at once');

    await store.members.setStatus({ ...w, user_id: 'frank', status: 'LEFT' });
    assertErrorBody(await get(`/conversations/${conversation_id}/messages?limit=10`, tok.frank!), 403, 'not_conversation_member');

    const metrics = (await request(`http://127.0.0.1:${node.metricsPort}/metrics`)).text;
    const count = (result: string): number => Number(new RegExp(`^chat_history_cache_requests_total\\{result="${result}"\\} (\\d+)`, 'm').exec(metrics)?.[1] ?? -1);
    assert.ok(count('hit') >= 3 && count('miss') >= 5, `hits and misses are counted:\n${metrics.split('\n').filter((l) => l.startsWith('chat_history')).join('\n')}`);
    assert.match(metrics, /^chat_history_cache_bytes \d+/m);
  });
});
