/**
 * A route whose body fields are all optional takes no body at all (no Content-Type either), as
 * the heartbeat and typing routes, which take none, do: it stands for `{}`. A body sent without
 * a Content-Type is still 415, and routes with a required field still want their body.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertErrorBody, bearer, request, type Res } from './helpers/http.ts';
import { startTestNode, type TestNode } from './helpers/processes.ts';
import { userToken } from './helpers/tokens.ts';

let node: TestNode;
const tok: Record<string, string> = {};
const app = () => `${node.api}/tenants/acme/applications/support`;
const raw = (method: string, url: string, token: string, headers: Record<string, string> = {}, body?: string): Promise<Res> =>
  request(url, { method, headers: { ...bearer(token), ...headers }, ...(body === undefined ? {} : { body }) });
const JSON_CT = { 'Content-Type': 'application/json' };

let group = '';
before(async () => {
  node = await startTestNode();
  tok.bob = await userToken(node.idp, 'bob');
  tok.carol = await userToken(node.idp, 'carol', 'chat-web');
  const created = await raw('POST', `${app()}/conversations`, tok.bob!, JSON_CT, JSON.stringify({ type: 'GROUP', name: 'empty bodies', member_user_ids: ['carol'] }));
  assert.equal(created.status, 201, created.text);
  group = created.json().conversation_id as string;
  for (const body of ['one', 'two']) {
    const sent = await raw('POST', `${app()}/conversations/${group}/messages`, tok.bob!, JSON_CT, JSON.stringify({ body }));
    assert.equal(sent.status, 201, sent.text);
  }
});
after(() => node?.stop());

test('mark-read with no body, and with an empty JSON body: up to the latest message', async () => {
  const variants: Record<string, string>[] = [{}, JSON_CT, { 'Content-Length': '0' }];
  for (const headers of variants) {
    const res = await raw('POST', `${app()}/conversations/${group}/read`, tok.bob!, headers);
    assert.equal(res.status, 200, `${JSON.stringify(headers)}: ${res.text}`);
    assert.deepEqual(res.json(), { conversation_id: group, last_read_seq: 2, unread_count: 0, has_unread: false });
  }
});

test('heartbeat and typing take no body either (for comparison)', async () => {
  assert.equal((await raw('POST', `${node.api}/tenants/acme/presence/heartbeat`, tok.bob!)).status, 204);
  assert.equal((await raw('POST', `${app()}/conversations/${group}/typing`, tok.bob!)).status, 204);
});

test('PATCH with no body changes nothing and answers the resource', async () => {
  const conv = await raw('PATCH', `${app()}/conversations/${group}`, tok.bob!);
  assert.equal(conv.status, 200, conv.text);
  assert.equal(conv.json().name, 'empty bodies');
  const settings = await raw('PATCH', `${node.api}/tenants/acme/admin/settings`, tok.carol!);
  assert.equal(settings.status, 200, settings.text);
  assert.deepEqual(settings.json(), { message_retention_days: null, updated_at: null });
});

test('a body without Content-Type is still 415; a required field still needs a body', async () => {
  assertErrorBody(await raw('POST', `${app()}/conversations/${group}/read`, tok.bob!, {}, '{"seq": 1}'), 415, 'unsupported_media_type');
  assertErrorBody(await raw('POST', `${app()}/conversations/${group}/read`, tok.bob!, { 'Content-Type': 'text/plain' }), 415, 'unsupported_media_type');
  assertErrorBody(await raw('POST', `${app()}/conversations/${group}/messages`, tok.bob!), 415, 'unsupported_media_type');
  const missing = assertErrorBody(await raw('POST', `${app()}/conversations/${group}/messages`, tok.bob!, JSON_CT), 400, 'invalid_request');
  assert.deepEqual(missing.message, ['body: a JSON object is required']);
  // The node is still fine after refusing.
  assert.equal((await raw('POST', `${app()}/conversations/${group}/read`, tok.bob!)).status, 200);
});
