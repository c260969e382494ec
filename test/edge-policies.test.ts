/**
 * Route-table policies the identity-only routes do not exercise yet, proven on routes declared in
 * this test against a real Edge over real HTTP with real tokens from the development IdP:
 * `user_required` for person-acting operations, and the per-user `send` / `lookup` rate limits.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import uWS from '@trufflesuite/uws-js-unofficial';
import { Type } from '@sinclair/typebox';
import { defineRoute, type AnyRoute } from '../src/api/route.ts';
import { ApiError } from '../src/errors/catalog.ts';
import { ApplicationParams } from '../src/api/schemas/common.ts';
import { DEFAULT_FIXTURE, loadConfig } from '../src/config/index.ts';
import { Edge } from '../src/http/edge.ts';
import { EmbeddedIdentityDirectory } from '../src/identity/embedded-identity-directory.ts';
import { IdentityService } from '../src/identity/identity-service.ts';
import { DevIdp } from '../src/idp/dev-idp.ts';
import { loadFixture } from '../src/idp/fixture.ts';
import { createLogger } from '../src/log/index.ts';
import { Metrics } from '../src/metrics/index.ts';
import { createRateLimiter } from '../src/ratelimit/index.ts';
import { testServices } from './helpers/services.ts';
import { assertErrorBody, bearer, request } from './helpers/http.ts';

const common = {
  tag: 'Test', audience: ['user'] as const, scopes: { user: ['chat:access'] }, context: 'application' as const,
  cors: 'application' as const, schemas: { params: ApplicationParams }, status: 200 as const, errors: [],
  handler: () => ({ ok: true }),
};
const routes = [
  defineRoute({ ...common, audience: ['user'], operationId: 'typing', summary: 'acts as a person', method: 'POST', path: '/tenants/{tenant_id}/applications/{application_id}/typing', machineRefusal: 'user_required' }),
  defineRoute({ ...common, audience: ['user', 'machine'], scopes: { user: ['chat:access'], machine: ['chat:sync'] }, operationId: 'send', summary: 'send', method: 'POST', path: '/tenants/{tenant_id}/applications/{application_id}/send', rateLimit: 'send' }),
  defineRoute({ ...common, audience: ['user'], operationId: 'lookup', summary: 'lookup', method: 'GET', path: '/tenants/{tenant_id}/applications/{application_id}/lookup', rateLimit: 'lookup' }),
  defineRoute({
    ...common, audience: ['user', 'machine'], scopes: { user: ['chat:access'], machine: ['chat:sync'] }, operationId: 'count', summary: 'counts executions', method: 'POST',
    path: '/tenants/{tenant_id}/applications/{application_id}/count', status: 201,
    schemas: { params: ApplicationParams, body: Type.Object({ value: Type.String() }, { additionalProperties: false }) },
    handler: ({ body }) => {
      executions++;
      if (body.value === 'archived') throw new ApiError('conversation_archived', 'refused by the operation itself');
      if (body.value === 'crash') throw new Error('boom');
      return { n: executions, value: body.value };
    },
  }),
] as AnyRoute[];
let executions = 0;

let base = '';
let services: Awaited<ReturnType<typeof testServices>>;
let listen: uWS.us_listen_socket | null = null;
let idp: DevIdp;

async function userToken(userId: string): Promise<string> {
  const own = await idp.login(new Map([['user_id', userId], ['client_id', 'acme-support-web']]));
  const res = await idp.token({
    params: new Map([
      ['grant_type', 'urn:ietf:params:oauth:grant-type:token-exchange'], ['subject_token', own.id_token],
      ['subject_token_type', 'urn:ietf:params:oauth:token-type:id_token'], ['resource', 'urn:chat:api'],
      ['client_id', 'acme-support-web'], ['client_secret', 'acme-support-web-secret'],
    ]),
    authorization: undefined,
  });
  return res.access_token;
}

before(async () => {
  const config = // Hour-long windows: a window boundary falling inside the test (which would let the sliding
  // window weigh hits differently) becomes practically impossible.
  loadConfig({ CHAT_RATE_SEND: '3/3600s', CHAT_RATE_LOOKUP: '2/3600s' });
  const log = createLogger('silent');
  const metrics = new Metrics();
  idp = new DevIdp(await loadFixture(DEFAULT_FIXTURE), { issuer: 'http://127.0.0.1/idp', devLogin: true });
  const identity = new IdentityService(new EmbeddedIdentityDirectory(idp), { cacheTtlMs: 10000, revocationPollMs: 10000, tokenCacheSize: 100 }, metrics, log);
  await identity.start();
  services = await testServices(config, identity);
  const edge = new Edge(routes, {
    config, identity, rateLimiter: createRateLimiter({ driver: 'memory' }), metrics, log,
    services,
  });
  const app = uWS.App();
  app.any('/api/v1/*', edge.handle);
  await new Promise<void>((resolve) =>
    app.listen('127.0.0.1', 0, (s) => {
      listen = s;
      base = `http://127.0.0.1:${uWS.us_socket_local_port(s as unknown as uWS.us_socket)}/api/v1/tenants/acme/applications/support`;
      resolve();
    }),
  );
});
after(async () => {
  if (listen) uWS.us_listen_socket_close(listen);
  await services.cleanup();
});

test('operations acting as a person refuse machines with user_required', async () => {
  const machine = await idp.token({
    params: new Map([['grant_type', 'client_credentials'], ['client_id', 'acme-support-backend'], ['client_secret', 'acme-support-backend-secret']]),
    authorization: undefined,
  });
  assertErrorBody(await request(`${base}/typing`, { method: 'POST', headers: bearer(machine.access_token) }), 403, 'user_required');
  assert.equal((await request(`${base}/typing`, { method: 'POST', headers: bearer(await userToken('bob')) })).status, 200);
});

test('sending is limited per user, with Retry-After and RateLimit headers', async () => {
  const bob = await userToken('bob');
  const carol = await userToken('carol');
  const remaining: string[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await request(`${base}/send`, { method: 'POST', headers: bearer(bob) });
    assert.equal(res.status, 200);
    assert.equal(res.headers['ratelimit-policy'], '"send";q=3;w=3600');
    remaining.push(String(res.headers.ratelimit));
  }
  assert.deepEqual(remaining.map((r) => /r=(\d+)/.exec(r)?.[1]), ['2', '1', '0']);
  const refused = await request(`${base}/send`, { method: 'POST', headers: bearer(bob) });
  assertErrorBody(refused, 429, 'rate_limited');
  const retry = Number(refused.headers['retry-after']);
  assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= 7200, `Retry-After ${refused.headers['retry-after']}`);
  assert.match(String(refused.headers.ratelimit), /"send";r=0;t=\d+/);
  // Per user: carol is unaffected by bob's sends.
  assert.equal((await request(`${base}/send`, { method: 'POST', headers: bearer(carol) })).status, 200);
});

test('user lookup is limited per user under its own policy', async () => {
  const frank = await userToken('frank');
  for (let i = 0; i < 2; i++) assert.equal((await request(`${base}/lookup`, { headers: bearer(frank) })).status, 200);
  const refused = await request(`${base}/lookup`, { headers: bearer(frank) });
  assertErrorBody(refused, 429, 'rate_limited');
  assert.ok(Number(refused.headers['retry-after']) >= 1);
  // The send budget of the same user is separate.
  assert.equal((await request(`${base}/send`, { method: 'POST', headers: bearer(frank) })).status, 200);
});

describe('Idempotency-Key', () => {
  const post = (token: string, value: string, key?: string) =>
    request(`${base}/count`, { method: 'POST', headers: { ...bearer(token), 'Content-Type': 'application/json', ...(key ? { 'Idempotency-Key': key } : {}) }, body: JSON.stringify({ value }) });

  test('a retry with the same key and body replays the first response and runs nothing', async () => {
    const bob = await userToken('bob');
    const before = executions;
    const first = await post(bob, 'a', 'key-1');
    assert.equal(first.status, 201);
    const again = await post(bob, 'a', 'key-1');
    assert.equal(again.status, 201);
    assert.equal(again.text, first.text);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(first.headers['idempotent-replayed'], undefined);
    assert.equal(executions, before + 1);
  });

  test('the same key with another body is idempotency_key_reused (422)', async () => {
    const bob = await userToken('bob');
    await post(bob, 'b', 'key-2');
    assertErrorBody(await post(bob, 'c', 'key-2'), 422, 'idempotency_key_reused');
  });

  test('keys are per principal; requests without a key always run', async () => {
    const before = executions;
    await post(await userToken('bob'), 'd', 'key-3');
    await post(await userToken('carol'), 'd', 'key-3');
    await post(await userToken('carol'), 'd');
    await post(await userToken('carol'), 'd');
    assert.equal(executions, before + 4);
  });

  test("the operation's own refusal is recorded; a crash is not", async () => {
    const bob = await userToken('bob');
    const before = executions;
    assertErrorBody(await post(bob, 'archived', 'key-4'), 422, 'conversation_archived');
    const replay = await post(bob, 'archived', 'key-4');
    assertErrorBody(replay, 422, 'conversation_archived');
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(executions, before + 1);
    assertErrorBody(await post(bob, 'crash', 'key-5'), 500, 'server_error');
    assertErrorBody(await post(bob, 'crash', 'key-5'), 500, 'server_error');
    assert.equal(executions, before + 3, 'a 5xx released the key, so the retry ran');
  });

  test('a malformed key is invalid_request', async () => {
    assertErrorBody(await post(await userToken('bob'), 'e', 'x'.repeat(256)), 400, 'invalid_request');
  });
});
