/**
 * The edge's request machinery (body limit, JSON, Content-Type, validation, 404/405, unexpected
 * exceptions) over real HTTP, against an Edge serving a route table declared in this test: the
 * machinery is generic, so it is proven once here rather than per route.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import uWS from '@trufflesuite/uws-js-unofficial';
import { Type } from '@sinclair/typebox';
import { defineRoute, type AnyRoute } from '../src/api/route.ts';
import { loadConfig, DEFAULT_FIXTURE } from '../src/config/index.ts';
import { Edge } from '../src/http/edge.ts';
import { IdentityService } from '../src/identity/identity-service.ts';
import { EmbeddedIdentityDirectory } from '../src/identity/embedded-identity-directory.ts';
import { DevIdp } from '../src/idp/dev-idp.ts';
import { loadFixture } from '../src/idp/fixture.ts';
import { createLogger } from '../src/log/index.ts';
import { Metrics } from '../src/metrics/index.ts';
import { createRateLimiter } from '../src/ratelimit/index.ts';
import { testServices } from './helpers/services.ts';
import { assertErrorBody, request } from './helpers/http.ts';

const Item = Type.Object(
  { name: Type.String({ minLength: 1 }), count: Type.Optional(Type.Integer({ minimum: 0 })), tags: Type.Optional(Type.Array(Type.String())) },
  { additionalProperties: false },
);

const routes = [
  defineRoute({
    operationId: 'echo', summary: 'echo', tag: 'Test', method: 'POST', path: '/echo',
    audience: ['public'], scopes: {}, context: 'none', cors: 'none',
    schemas: { body: Item, response: Item }, status: 201, errors: [],
    handler: ({ body }) => body,
  }),
  defineRoute({
    operationId: 'echoPatch', summary: 'echo', tag: 'Test', method: 'PATCH', path: '/echo',
    audience: ['public'], scopes: {}, context: 'none', cors: 'none',
    schemas: { body: Item }, status: 204, errors: [],
    handler: () => undefined,
  }),
  defineRoute({
    operationId: 'boom', summary: 'throws', tag: 'Test', method: 'GET', path: '/boom/{thing_id}',
    audience: ['public'], scopes: {}, context: 'none', cors: 'none',
    schemas: { params: Type.Object({ thing_id: Type.String({ pattern: '^[a-z]+$' }) }) }, status: 200, errors: [],
    handler: () => {
      throw new Error('secret internal detail /etc/passwd');
    },
  }),
] as AnyRoute[];

let base = '';
let services: Awaited<ReturnType<typeof testServices>>;
let listenSocket: uWS.us_listen_socket | null = null;
let logged = '';

before(async () => {
  const config = loadConfig({ CHAT_BODY_LIMIT_BYTES: String(256 * 1024) });
  // Capture error logs to prove unexpected exceptions are logged with the request id.
  const log = createLogger('error', 'test', { write: (line: string) => void (logged += line) });
  const metrics = new Metrics();
  const directory = new EmbeddedIdentityDirectory(new DevIdp(await loadFixture(DEFAULT_FIXTURE), { issuer: 'http://127.0.0.1/idp', devLogin: true }));
  const identity = new IdentityService(directory, { cacheTtlMs: 1000, revocationPollMs: 1000, tokenCacheSize: 10 }, metrics, log);
  services = await testServices(config, identity);
  const edge = new Edge(routes, {
    config, identity, rateLimiter: createRateLimiter({ driver: 'memory' }), metrics, log,
    services,
  });
  const app = uWS.App();
  app.any('/api/v1/*', edge.handle);
  await new Promise<void>((resolve) => {
    app.listen('127.0.0.1', 0, (s) => {
      listenSocket = s;
      base = `http://127.0.0.1:${uWS.us_socket_local_port(s as unknown as uWS.us_socket)}/api/v1`;
      resolve();
    });
  });
});

after(async () => {
  if (listenSocket) uWS.us_listen_socket_close(listenSocket);
  await services.cleanup();
});

const json = { 'Content-Type': 'application/json' };

describe('request bodies', () => {
  test('a valid body is parsed, validated and handled', async () => {
    const res = await request(`${base}/echo`, { method: 'POST', headers: json, body: JSON.stringify({ name: 'a', tags: ['x'] }) });
    assert.equal(res.status, 201);
    assert.deepEqual(res.json(), { name: 'a', tags: ['x'] });
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.ok(res.headers['x-request-id']);
  });

  test('Content-Type with charset is accepted', async () => {
    const res = await request(`${base}/echo`, { method: 'POST', headers: { 'Content-Type': 'application/json; charset=utf-8' }, body: '{"name":"b"}' });
    assert.equal(res.status, 201);
  });

  test('malformed JSON is invalid_json (400)', async () => {
    const res = await request(`${base}/echo`, { method: 'POST', headers: json, body: '{"name": "a",' });
    assertErrorBody(res, 400, 'invalid_json', '/api/v1/echo');
  });

  test('a wrong Content-Type is unsupported_media_type (415)', async () => {
    const res = await request(`${base}/echo`, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: '{"name":"a"}' });
    assertErrorBody(res, 415, 'unsupported_media_type');
    const missing = await request(`${base}/echo`, { method: 'POST', body: '{"name":"a"}' });
    assertErrorBody(missing, 415, 'unsupported_media_type');
  });

  test('every validation problem is listed, unknown fields included', async () => {
    const res = await request(`${base}/echo?x=1`, { method: 'POST', headers: json, body: JSON.stringify({ count: -1, tags: 'no', extra: true, more: 1 }) });
    const body = assertErrorBody(res, 400, 'invalid_request', '/api/v1/echo');
    const msgs = body.message as string[];
    assert.ok(Array.isArray(msgs));
    assert.ok(msgs.some((m) => m.includes('missing required field "name"')), msgs.join('|'));
    assert.ok(msgs.some((m) => m.includes('unknown field "extra"')), msgs.join('|'));
    assert.ok(msgs.some((m) => m.includes('unknown field "more"')), msgs.join('|'));
    assert.ok(msgs.some((m) => m.startsWith('body.count')), msgs.join('|'));
    assert.ok(msgs.some((m) => m.startsWith('body.tags')), msgs.join('|'));
  });

  test('a body that is not an object is invalid_request', async () => {
    for (const b of ['[]', '"s"', '42', 'null']) {
      const res = await request(`${base}/echo`, { method: 'POST', headers: json, body: b });
      assertErrorBody(res, 400, 'invalid_request');
    }
    const empty = await request(`${base}/echo`, { method: 'POST', headers: json, body: '' });
    assertErrorBody(empty, 400, 'invalid_request');
  });

  test('a declared Content-Length over 256 kB is payload_too_large (413) without reading it', async () => {
    const big = Buffer.alloc(256 * 1024 + 1, 0x20);
    const res = await request(`${base}/echo`, { method: 'POST', headers: json, body: big });
    assertErrorBody(res, 413, 'payload_too_large');
  });

  test('exactly 256 kB is still read', async () => {
    const name = 'n'.repeat(256 * 1024 - '{"name":""}'.length);
    const res = await request(`${base}/echo`, { method: 'POST', headers: json, body: JSON.stringify({ name }) });
    assert.equal(res.status, 201);
  });

  test('a chunked body is cut off at the limit (413)', async () => {
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const res = await request(`${base}/echo`, { method: 'POST', headers: { ...json, 'Transfer-Encoding': 'chunked' }, chunks: [chunk, chunk, chunk, chunk, chunk] });
    assertErrorBody(res, 413, 'payload_too_large');
  });

  test('PATCH with 204 answers without a body', async () => {
    const res = await request(`${base}/echo`, { method: 'PATCH', headers: json, body: '{"name":"x"}' });
    assert.equal(res.status, 204);
    assert.equal(res.text, '');
  });
});

describe('routing and failures', () => {
  test('unknown route is not_found (404) with the path without query', async () => {
    const res = await request(`${base}/nothing/here?secret=1`);
    assertErrorBody(res, 404, 'not_found', '/api/v1/nothing/here');
  });

  test('wrong method is 405 with Allow', async () => {
    const res = await request(`${base}/echo`, { method: 'DELETE' });
    assertErrorBody(res, 405, 'method_not_allowed');
    assert.equal(res.headers.allow, 'POST, PATCH, OPTIONS');
  });

  test('path parameters are validated', async () => {
    const res = await request(`${base}/boom/UPPER`);
    const body = assertErrorBody(res, 400, 'invalid_request');
    assert.ok((body.message as string[])[0]?.startsWith('path.thing_id'));
  });

  test('an unexpected exception is server_error (500) and leaks nothing, logged with the request id', async () => {
    const res = await request(`${base}/boom/abc`, { headers: { 'X-Request-Id': 'req-boom-1' } });
    const body = assertErrorBody(res, 500, 'server_error');
    assert.doesNotMatch(JSON.stringify(body), /passwd|secret|Error:|at /);
    assert.equal(res.headers['x-request-id'], 'req-boom-1');
    assert.match(String(body.message), /req-boom-1/);
    await new Promise((r) => setTimeout(r, 50));
    const line = logged.split('\n').find((l) => l.includes('req-boom-1'));
    assert.ok(line, 'error logged with request id');
    assert.match(line, /secret internal detail/);
  });
});
