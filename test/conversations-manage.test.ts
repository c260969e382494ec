/** Members, conversation updates, archive and delete, reactions, read state and typing, over HTTP. */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { assertErrorBody, bearer, request, type Res } from './helpers/http.ts';
import { startTestNode, type TestNode } from './helpers/processes.ts';
import { machineToken, userToken } from './helpers/tokens.ts';

let node: TestNode;
const tok: Record<string, string> = {};
const base = () => `${node.api}/tenants/acme/applications/support`;
const call = (method: string, path: string, token: string, body?: unknown): Promise<Res> =>
  request(`${base()}${path}`, { method, headers: { ...bearer(token), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
const create = async (token: string, body: unknown): Promise<string> => {
  const res = await call('POST', '/conversations', token, body);
  assert.ok(res.status === 201 || res.status === 200, res.text);
  return res.json().conversation_id as string;
};

before(async () => {
  node = await startTestNode();
  for (const u of ['bob', 'carol', 'frank', 'alice', 'grace']) tok[u] = await userToken(node.idp, u);
  tok.machine = await machineToken(node.idp);
});
after(() => node.stop());

describe('members', () => {
  test('the GROUP owner adds and removes; a plain member may not; anyone may leave', async () => {
    const g = await create(tok.bob!, { type: 'GROUP', name: 'g', member_user_ids: ['frank'] });
    const added = await call('POST', `/conversations/${g}/members`, tok.bob!, { user_id: 'carol' });
    assert.equal(added.status, 201, added.text);
    assert.equal(added.json().user_id, 'carol');
    assert.equal(added.json().status, 'ACTIVE');
    assert.equal(added.json().display_name, 'Carol Chen');
    assertErrorBody(await call('POST', `/conversations/${g}/members`, tok.frank!, { user_id: 'alice' }), 403, 'missing_capability');
    assertErrorBody(await call('POST', `/conversations/${g}/members`, tok.bob!, { user_id: 'mallory' }), 422, 'target_user_not_eligible');
    assertErrorBody(await call('POST', `/conversations/${g}/members`, tok.bob!, { user_id: 'alice', display_name: 'x' }), 400, 'invalid_request');
    assertErrorBody(await call('DELETE', `/conversations/${g}/members/carol`, tok.frank!), 403, 'missing_capability');
    assert.equal((await call('DELETE', `/conversations/${g}/members/carol`, tok.bob!)).status, 204);
    // Read before leaving, so the access check is memoized (store gate cache): leaving must still end it.
    assert.equal((await call('GET', `/conversations/${g}/messages`, tok.frank!)).status, 200);
    assert.equal((await call('GET', `/conversations/${g}/messages`, tok.frank!)).status, 200);
    assert.equal((await call('DELETE', `/conversations/${g}/members/frank`, tok.frank!)).status, 204, 'leaving');
    const members = await call('GET', `/conversations/${g}/members`, tok.bob!);
    assert.deepEqual((members.json().items as { user_id: string }[]).map((m) => m.user_id), ['bob']);
    assertErrorBody(await call('GET', `/conversations/${g}/messages`, tok.frank!), 403, 'not_conversation_member');
  });

  test('groups.manage alone adds to a GROUP the caller is not in, as it removes; without it a non-member is refused', async () => {
    const g = await create(tok.bob!, { type: 'GROUP', name: 'managed from outside', member_user_ids: ['frank'] });
    // carol is app_moderator (groups.manage) and not a member.
    const added = await call('POST', `/conversations/${g}/members`, tok.carol!, { user_id: 'alice' });
    assert.equal(added.status, 201, added.text);
    assert.equal(added.json().user_id, 'alice');
    assert.equal((await call('DELETE', `/conversations/${g}/members/alice`, tok.carol!)).status, 204);
    // grace holds no groups.manage and is not a member.
    assertErrorBody(await call('POST', `/conversations/${g}/members`, tok.grace!, { user_id: 'alice' }), 403, 'not_conversation_member');
    const members = await call('GET', `/conversations/${g}/members`, tok.bob!);
    assert.deepEqual((members.json().items as { user_id: string }[]).map((m) => m.user_id).sort(), ['bob', 'frank']);
  });

  test('DIRECT members never change', async () => {
    const d = await create(tok.bob!, { type: 'DIRECT', member_user_ids: ['frank'] });
    assertErrorBody(await call('POST', `/conversations/${d}/members`, tok.bob!, { user_id: 'carol' }), 422, 'direct_conversation_immutable');
    assertErrorBody(await call('DELETE', `/conversations/${d}/members/frank`, tok.bob!), 422, 'direct_conversation_immutable');
  });

  test('anyone joins a PUBLIC channel themselves; adding others needs channels.manage', async () => {
    const ch = await create(tok.carol!, { type: 'CHANNEL', name: 'town-square' });
    const joined = await call('POST', `/conversations/${ch}/members`, tok.frank!, { user_id: 'frank' });
    assert.equal(joined.status, 201, joined.text);
    assertErrorBody(await call('POST', `/conversations/${ch}/members`, tok.frank!, { user_id: 'bob' }), 403, 'missing_capability');
    assert.equal((await call('POST', `/conversations/${ch}/members`, tok.carol!, { user_id: 'bob' })).status, 201);
  });
});

describe('moderation removal (admin route)', () => {
  test('a tenant admin removes a member from any conversation; others may not', async () => {
    const g = await create(tok.bob!, { type: 'GROUP', name: 'moderated', member_user_ids: ['frank'] });
    const url = (conv: string, user: string) => `${node.api}/tenants/acme/admin/conversations/${conv}/members/${user}`;
    assertErrorBody(await request(url(g, 'frank'), { method: 'DELETE', headers: bearer(tok.bob!) }), 403, 'missing_capability');
    assertErrorBody(await request(url(g, 'frank'), { method: 'DELETE', headers: bearer(tok.machine!) }), 403, 'principal_not_allowed');
    assertErrorBody(await request(url(crypto.randomUUID(), 'frank'), { method: 'DELETE', headers: bearer(tok.carol!) }), 404, 'not_found');
    const carolWeb = await userToken(node.idp, 'carol', 'chat-web');
    assert.equal((await call('GET', `/conversations/${g}/messages`, tok.frank!)).status, 200, 'frank reads while a member');
    assert.equal((await request(url(g, 'frank'), { method: 'DELETE', headers: bearer(carolWeb) })).status, 204);
    assertErrorBody(await call('GET', `/conversations/${g}/messages`, tok.frank!), 403, 'not_conversation_member');
    const members = await call('GET', `/conversations/${g}/members`, tok.bob!);
    assert.deepEqual((members.json().items as { user_id: string }[]).map((m) => m.user_id), ['bob']);
    const d = await create(tok.bob!, { type: 'DIRECT', member_user_ids: ['grace'] });
    assertErrorBody(await request(url(d, 'grace'), { method: 'DELETE', headers: bearer(carolWeb) }), 422, 'direct_conversation_immutable');
  });
});

describe('update, archive, delete', () => {
  test('rename and archive; an archived conversation refuses sends until unarchived', async () => {
    const g = await create(tok.bob!, { type: 'GROUP', name: 'before', member_user_ids: ['frank'] });
    const renamed = await call('PATCH', `/conversations/${g}`, tok.bob!, { name: 'after', description: 'about' });
    assert.equal(renamed.status, 200, renamed.text);
    assert.equal(renamed.json().name, 'after');
    assert.equal(renamed.json().description, 'about');
    assertErrorBody(await call('PATCH', `/conversations/${g}`, tok.frank!, { name: 'nope' }), 403, 'missing_capability');
    assert.equal((await call('PATCH', `/conversations/${g}`, tok.bob!, { status: 'ARCHIVED' })).json().status, 'ARCHIVED');
    assertErrorBody(await call('POST', `/conversations/${g}/messages`, tok.bob!, { body: 'hi' }), 422, 'conversation_archived');
    assertErrorBody(await call('PATCH', `/conversations/${g}`, tok.bob!, { name: 'while archived' }), 422, 'conversation_archived');
    assert.equal((await call('PATCH', `/conversations/${g}`, tok.bob!, { status: 'ACTIVE' })).json().status, 'ACTIVE');
    assert.equal((await call('POST', `/conversations/${g}/messages`, tok.bob!, { body: 'hi' })).status, 201);
  });

  test('delete: the conversation disappears; machines may not delete', async () => {
    const g = await create(tok.bob!, { type: 'GROUP', name: 'doomed', member_user_ids: ['frank'] });
    assertErrorBody(await call('DELETE', `/conversations/${g}`, tok.machine!), 403, 'principal_not_allowed');
    assertErrorBody(await call('DELETE', `/conversations/${g}`, tok.frank!), 403, 'missing_capability');
    assert.equal((await call('DELETE', `/conversations/${g}`, tok.bob!)).status, 204);
    assertErrorBody(await call('GET', `/conversations/${g}`, tok.bob!), 404, 'not_found');
    const list = await call('GET', '/conversations?limit=100', tok.bob!);
    assert.ok(!(list.json().items as { conversation_id: string }[]).some((c) => c.conversation_id === g));
  });
});

describe('reactions, read state, typing', () => {
  test('reactions count per emoji with reacted_by_me; idempotent add and remove', async () => {
    const g = await create(tok.bob!, { type: 'GROUP', name: 'r', member_user_ids: ['frank'] });
    const m = (await call('POST', `/conversations/${g}/messages`, tok.bob!, { body: 'react to me' })).json().message_id as string;
    const thumbs = encodeURIComponent('👍');
    const r1 = await call('PUT', `/conversations/${g}/messages/${m}/reactions/${thumbs}`, tok.bob!);
    assert.equal(r1.status, 200, r1.text);
    await call('PUT', `/conversations/${g}/messages/${m}/reactions/${thumbs}`, tok.bob!);
    const r2 = await call('PUT', `/conversations/${g}/messages/${m}/reactions/${thumbs}`, tok.frank!);
    assert.deepEqual(r2.json().reactions, [{ emoji: '👍', count: 2, reacted_by_me: true }]);
    const history = await call('GET', `/conversations/${g}/messages`, tok.bob!);
    assert.deepEqual(history.json().items[0].reactions, [{ emoji: '👍', count: 2, reacted_by_me: true }]);
    const r3 = await call('DELETE', `/conversations/${g}/messages/${m}/reactions/${thumbs}`, tok.frank!);
    assert.deepEqual(r3.json().reactions, [{ emoji: '👍', count: 1, reacted_by_me: false }]);
    assertErrorBody(await call('PUT', `/conversations/${g}/messages/${m}/reactions/${thumbs}`, tok.machine!), 403, 'user_required');
    assertErrorBody(await call('PUT', `/conversations/${g}/messages/${m}/reactions/${thumbs}`, tok.alice!), 403, 'not_conversation_member');
    assertErrorBody(await call('PUT', `/conversations/${g}/messages/${m}/reactions/a%20b`, tok.bob!), 400, 'invalid_request');
  });

  test('unread counts and mark read', async () => {
    const g = await create(tok.bob!, { type: 'GROUP', name: 'u', member_user_ids: ['frank'] });
    for (let i = 0; i < 3; i++) await call('POST', `/conversations/${g}/messages`, tok.bob!, { body: `m${i}` });
    const before = await call('GET', `/conversations/${g}`, tok.frank!);
    assert.equal(before.json().unread_count, 3);
    assert.equal(before.json().has_unread, true);
    const mine = await call('GET', `/conversations/${g}`, tok.bob!);
    assert.equal(mine.json().unread_count, 0, "one's own messages are never unread");
    const partial = await call('POST', `/conversations/${g}/read`, tok.frank!, { seq: 2 });
    assert.equal(partial.status, 200, partial.text);
    assert.equal(partial.json().unread_count, 1);
    const all = await call('POST', `/conversations/${g}/read`, tok.frank!, {});
    assert.deepEqual([all.json().unread_count, all.json().has_unread], [0, false]);
    assertErrorBody(await call('POST', `/conversations/${g}/read`, tok.machine!, {}), 403, 'user_required');
  });

  test('typing is accepted for members only', async () => {
    const g = await create(tok.bob!, { type: 'GROUP', name: 't', member_user_ids: ['frank'] });
    assert.equal((await call('POST', `/conversations/${g}/typing`, tok.frank!)).status, 204);
    assertErrorBody(await call('POST', `/conversations/${g}/typing`, tok.alice!), 403, 'not_conversation_member');
    assertErrorBody(await call('POST', `/conversations/${g}/typing`, tok.machine!), 403, 'user_required');
  });
});
