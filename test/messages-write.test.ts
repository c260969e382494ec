/** Creating conversations and sending, editing and deleting messages over HTTP, through the actors. */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { assertErrorBody, bearer, request, type Res } from './helpers/http.ts';
import { startTestNode, type TestNode } from './helpers/processes.ts';
import { machineToken, userToken } from './helpers/tokens.ts';

let node: TestNode;
const tok: Record<string, string> = {};
const json = (token: string) => ({ ...bearer(token), 'Content-Type': 'application/json' });
const base = () => `${node.api}/tenants/acme/applications/support`;
const post = (path: string, token: string, body: unknown, headers: Record<string, string> = {}): Promise<Res> =>
  request(`${base()}${path}`, { method: 'POST', headers: { ...json(token), ...headers }, body: JSON.stringify(body) });

before(async () => {
  node = await startTestNode({ CHAT_RATE_SEND: '1000/10s' });
  for (const u of ['bob', 'carol', 'frank', 'alice']) tok[u] = await userToken(node.idp, u);
  tok.machine = await machineToken(node.idp);
  tok.reader = await machineToken(node.idp, 'acme-support-reader');
});
after(() => node.stop());

describe('POST conversations', () => {
  test('a DIRECT is created once, and every create of the pair answers 201 with it (also under concurrency)', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => post('/conversations', tok.bob!, { type: 'DIRECT', member_user_ids: ['carol'] })));
    const ids = new Set(results.map((r) => r.json().conversation_id));
    assert.equal(ids.size, 1, 'one conversation for the pair');
    // The contract: "the status code is not distinguished from an existing DIRECT one".
    assert.deepEqual(results.map((r) => r.status), [201, 201, 201, 201, 201, 201, 201, 201]);
    const again = await post('/conversations', tok.carol!, { type: 'DIRECT', member_user_ids: ['bob'] });
    assert.equal(again.status, 201);
    assert.equal(again.json().conversation_id, [...ids][0]);
    assert.deepEqual((again.json().members as { user_id: string }[]).map((m) => m.user_id).sort(), ['bob', 'carol']);
  });

  test('GROUP: name required, creator is OWNER, members listed', async () => {
    assertErrorBody(await post('/conversations', tok.bob!, { type: 'GROUP', member_user_ids: ['frank'] }), 400, 'invalid_request');
    const res = await post('/conversations', tok.bob!, { type: 'GROUP', name: 'Team', member_user_ids: ['frank', 'carol'] });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.json().my_role, 'OWNER');
    assert.equal(res.json().member_count, 3);
    assert.equal(res.json().created_by_user_id, 'bob');
  });

  test('CHANNEL needs channels.create (bob lacks it: missing_capability); carol may', async () => {
    const denied = await post('/conversations', tok.bob!, { type: 'CHANNEL', name: 'news' });
    assertErrorBody(denied, 403, 'missing_capability');
    assert.match(denied.json().message, /channels\.create/);
    const ok = await post('/conversations', tok.carol!, { type: 'CHANNEL', name: 'news' });
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.json().visibility, 'PUBLIC');
    assert.equal('members' in ok.json(), false);
  });

  test('ineligible members are target_user_not_eligible; DIRECT needs exactly two', async () => {
    for (const who of ['mallory', 'dave', 'nobody', 'erin']) {
      assertErrorBody(await post('/conversations', tok.bob!, { type: 'GROUP', name: 'x', member_user_ids: [who] }), 422, 'target_user_not_eligible');
    }
    assertErrorBody(await post('/conversations', tok.bob!, { type: 'DIRECT', member_user_ids: ['carol', 'frank'] }), 400, 'invalid_request');
    assertErrorBody(await post('/conversations', tok.bob!, { type: 'DIRECT', member_user_ids: [] }), 400, 'invalid_request');
    assertErrorBody(await post('/conversations', tok.bob!, { type: 'DIRECT', member_user_ids: ['carol'], extra: 1 }), 400, 'invalid_request');
  });

  test('machines list every member and may name an actor; the client is recorded', async () => {
    assertErrorBody(await post('/conversations', tok.machine!, { type: 'GROUP', name: 'x' }), 400, 'invalid_request');
    const res = await post('/conversations', tok.machine!, { type: 'GROUP', name: 'Ops', member_user_ids: ['bob', 'frank'], actor_user_id: 'carol' });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.json().created_by_user_id, 'carol');
    assert.equal(res.json().created_by_client_id, 'acme-support-backend');
    assert.equal(res.json().member_count, 3);
    assertErrorBody(await post('/conversations', tok.machine!, { type: 'DIRECT', member_user_ids: ['bob', 'frank'], actor_user_id: 'carol' }), 422, 'actor_not_member');
    assertErrorBody(await post('/conversations', tok.reader!, { type: 'GROUP', name: 'x', member_user_ids: ['bob'] }), 403, 'insufficient_scope');
  });
});

describe('messages', () => {
  let group = '';
  before(async () => {
    group = (await post('/conversations', tok.bob!, { type: 'GROUP', name: 'Chat', member_user_ids: ['carol', 'frank'] })).json().conversation_id;
  });

  test('send, then read it back; parallel sends keep one order with no gaps or duplicates', async () => {
    const first = await post(`/conversations/${group}/messages`, tok.bob!, { body: 'hello' });
    assert.equal(first.status, 201, first.text);
    assert.equal(first.json().sender.display_name, 'Bob Baker');
    assert.equal(first.json().message_type, 'TEXT');
    const sends = await Promise.all(Array.from({ length: 40 }, (_, i) => post(`/conversations/${group}/messages`, i % 2 ? tok.bob! : tok.carol!, { body: `m${i}` })));
    assert.ok(sends.every((r) => r.status === 201));
    const history = await request(`${base()}/conversations/${group}/messages?limit=100`, { headers: bearer(tok.bob!) });
    const seqs = (history.json().items as { seq: number }[]).map((m) => m.seq);
    assert.deepEqual(seqs, Array.from({ length: 41 }, (_, i) => 41 - i));
    assert.equal(new Set((history.json().items as { message_id: string }[]).map((m) => m.message_id)).size, 41);
  });

  test('limits and rules: body_too_long, too_many_attachments, SYSTEM, non-members, replies', async () => {
    assertErrorBody(await post(`/conversations/${group}/messages`, tok.bob!, { body: 'x'.repeat(10_001) }), 400, 'body_too_long');
    assert.equal((await post(`/conversations/${group}/messages`, tok.bob!, { body: '😀'.repeat(10_000) })).status, 201, 'characters, not UTF-16 units');
    const att = { file_id: 'f', name: 'a.png', mime_type: 'image/png', size: 1 };
    assertErrorBody(await post(`/conversations/${group}/messages`, tok.bob!, { body: '', attachments: Array(11).fill(att) }), 400, 'too_many_attachments');
    const file = await post(`/conversations/${group}/messages`, tok.bob!, { body: '', attachments: [att] });
    assert.equal(file.json().message_type, 'FILE');
    assert.equal(file.json().attachments[0].url, null);
    assertErrorBody(await post(`/conversations/${group}/messages`, tok.bob!, { body: 'x', message_type: 'SYSTEM' }), 403, 'system_message_not_allowed');
    assertErrorBody(await post(`/conversations/${group}/messages`, tok.alice!, { body: 'x' }), 403, 'not_conversation_member');
    assertErrorBody(await post(`/conversations/${crypto.randomUUID()}/messages`, tok.bob!, { body: 'x' }), 404, 'not_found');
    assertErrorBody(await post(`/conversations/${group}/messages`, tok.bob!, { body: 'x', reply_to_message_id: crypto.randomUUID() }), 422, 'invalid_reply');
    const reply = await post(`/conversations/${group}/messages`, tok.carol!, { body: 're', reply_to_message_id: file.json().message_id, mentioned_user_ids: ['bob'] });
    assert.equal(reply.status, 201, reply.text);
    assert.deepEqual(reply.json().mentioned_user_ids, ['bob']);
  });

  test('a send retried with the same Idempotency-Key creates one message', async () => {
    const key = crypto.randomUUID();
    const first = await post(`/conversations/${group}/messages`, tok.bob!, { body: 'exactly once' }, { 'Idempotency-Key': key });
    const retries = await Promise.all([1, 2, 3].map(() => post(`/conversations/${group}/messages`, tok.bob!, { body: 'exactly once' }, { 'Idempotency-Key': key })));
    assert.equal(first.status, 201);
    for (const r of retries) {
      assert.ok(r.status === 201 || r.status === 409, r.text);
      if (r.status === 201) assert.equal(r.json().message_id, first.json().message_id);
    }
    const history = await request(`${base()}/conversations/${group}/messages?limit=100`, { headers: bearer(tok.bob!) });
    assert.equal((history.json().items as { body: string }[]).filter((m) => m.body === 'exactly once').length, 1);
    assertErrorBody(await post(`/conversations/${group}/messages`, tok.bob!, { body: 'something else' }, { 'Idempotency-Key': key }), 422, 'idempotency_key_reused');
  });

  test('machines send on behalf of a member, or SYSTEM without a sender', async () => {
    const onBehalf = await post(`/conversations/${group}/messages`, tok.machine!, { body: 'from the backend', actor_user_id: 'frank' });
    assert.equal(onBehalf.status, 201, onBehalf.text);
    assert.equal(onBehalf.json().sender_user_id, 'frank');
    assert.equal(onBehalf.json().sender_client_id, 'acme-support-backend');
    const system = await post(`/conversations/${group}/messages`, tok.machine!, { body: 'maintenance', message_type: 'SYSTEM' });
    assert.equal(system.json().sender_user_id, null);
    assert.equal(system.json().sender, null);
    assertErrorBody(await post(`/conversations/${group}/messages`, tok.machine!, { body: 'x' }), 400, 'invalid_request');
    assertErrorBody(await post(`/conversations/${group}/messages`, tok.machine!, { body: 'x', actor_user_id: 'alice' }), 422, 'actor_not_member');
    assertErrorBody(await post(`/conversations/${group}/messages`, tok.machine!, { body: 'x', actor_user_id: 'mallory' }), 422, 'target_user_not_eligible');
  });

  test('edit and delete: authors and moderators; machines never', async () => {
    const m = (await post(`/conversations/${group}/messages`, tok.bob!, { body: 'draft' })).json();
    const url = `${base()}/conversations/${group}/messages/${m.message_id}`;
    const patch = (token: string, body: unknown) => request(url, { method: 'PATCH', headers: json(token), body: JSON.stringify(body) });
    const edited = await patch(tok.bob!, { body: 'final' });
    assert.equal(edited.status, 200, edited.text);
    assert.equal(edited.json().body, 'final');
    assert.equal(edited.json().status, 'EDITED');
    assert.ok(edited.json().edited_at);
    assertErrorBody(await patch(tok.frank!, { body: 'hijack' }), 403, 'missing_capability');
    assertErrorBody(await patch(tok.bob!, { body: 'x'.repeat(10_001) }), 400, 'body_too_long');
    assertErrorBody(await patch(tok.machine!, { body: 'x' }), 403, 'principal_not_allowed');
    assertErrorBody(await request(url, { method: 'DELETE', headers: bearer(tok.machine!) }), 403, 'principal_not_allowed');
    const del = await request(url, { method: 'DELETE', headers: bearer(tok.carol!) }); // carol moderates (messages.delete)
    assert.equal(del.status, 204, del.text);
    const history = await request(`${base()}/conversations/${group}/messages?limit=1`, { headers: bearer(tok.bob!) });
    const tomb = (history.json().items as { message_id: string; status: string; body: string }[])[0]!;
    assert.equal(tomb.message_id, m.message_id);
    assert.equal(tomb.status, 'DELETED');
    assert.equal(tomb.body, '');
  });
});
