/**
 * The edge's limits and HTTP framing over real sockets, against an Edge serving a route table
 * declared here: bounded validation answers, and (framing) conflicting Content-Length headers,
 * bodies on routes that take none, oversized request targets, and a refused upload whose answer
 * must reach a client that is still sending.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import uWS from '@trufflesuite/uws-js-unofficial';
import { Type } from '@sinclair/typebox';
import { defineRoute, type AnyRoute } from '../src/api/route.ts';
import { FULL_CHECK_MAX_VALUES, MAX_LISTED_PROBLEMS } from '../src/api/validation.ts';
import { loadConfig, DEFAULT_FIXTURE } from '../src/config/index.ts';
import { Edge } from '../src/http/edge.ts';
import { lingering } from '../src/http/linger.ts';
import { IdentityService } from '../src/identity/identity-service.ts';
import { EmbeddedIdentityDirectory } from '../src/identity/embedded-identity-directory.ts';
import { DevIdp } from '../src/idp/dev-idp.ts';
import { loadFixture } from '../src/idp/fixture.ts';
import { createLogger } from '../src/log/index.ts';
import { Metrics } from '../src/metrics/index.ts';
import { createRateLimiter } from '../src/ratelimit/index.ts';
import { testServices } from './helpers/services.ts';
import { assertErrorBody, request, type Res } from './helpers/http.ts';
import { rawExchange, rawUpload, type RawResponse } from './helpers/raw-http.ts';

const Item = Type.Object({ name: Type.String({ minLength: 1 }), n: Type.Integer({ minimum: 0, maximum: 10 }) }, { additionalProperties: false });
const Items = Type.Object({ items: Type.Array(Item), note: Type.Optional(Type.String()) }, { additionalProperties: false });

let received = 0;
const routes = [
  defineRoute({
    operationId: 'items', summary: 'items', tag: 'Test', method: 'POST', path: '/items',
    audience: ['public'], scopes: {}, context: 'none', cors: 'none',
    schemas: { body: Items }, status: 201, errors: [],
    handler: ({ body }) => {
      received++;
      return { count: body.items.length };
    },
  }),
  defineRoute({
    operationId: 'thing', summary: 'thing', tag: 'Test', method: 'GET', path: '/thing',
    audience: ['public'], scopes: {}, context: 'none', cors: 'none',
    schemas: { query: Type.Object({ q: Type.Optional(Type.String()) }, { additionalProperties: false }) }, status: 200, errors: [],
    handler: () => {
      things++;
      return { ok: true };
    },
  }),
] as AnyRoute[];
let things = 0;

let port = 0;
let base = '';
let services: Awaited<ReturnType<typeof testServices>>;
let listenSocket: uWS.us_listen_socket | null = null;
const LIMIT = 256 * 1024;

before(async () => {
  const config = loadConfig({ CHAT_BODY_LIMIT_BYTES: String(LIMIT) });
  const log = createLogger('silent');
  const metrics = new Metrics();
  const directory = new EmbeddedIdentityDirectory(new DevIdp(await loadFixture(DEFAULT_FIXTURE), { issuer: 'http://127.0.0.1/idp', devLogin: true }));
  const identity = new IdentityService(directory, { cacheTtlMs: 1000, revocationPollMs: 1000, tokenCacheSize: 10 }, metrics, log);
  services = await testServices(config, identity);
  const edge = new Edge(routes, { config, identity, rateLimiter: createRateLimiter({ driver: 'memory' }), metrics, log, services });
  const app = uWS.App();
  app.any('/api/v1/*', edge.handle);
  await new Promise<void>((resolve) => {
    app.listen('127.0.0.1', 0, (s) => {
      listenSocket = s;
      port = uWS.us_socket_local_port(s as unknown as uWS.us_socket);
      base = `http://127.0.0.1:${port}/api/v1`;
      resolve();
    });
  });
});

after(async () => {
  if (listenSocket) uWS.us_listen_socket_close(listenSocket);
  await services.cleanup();
});

const json = { 'Content-Type': 'application/json' };

describe('validation answers are bounded', () => {
  test('every problem of a small body is found; the first few are listed and the rest counted', async () => {
    const items = Array.from({ length: 30 }, () => ({ name: '', n: 99 }));
    const res = await request(`${base}/items`, { method: 'POST', headers: json, body: JSON.stringify({ items }) });
    const body = assertErrorBody(res, 400, 'invalid_request', '/api/v1/items');
    const lines = body.message as string[];
    assert.equal(lines.length, MAX_LISTED_PROBLEMS + 1, lines.join('\n'));
    assert.ok(lines[0]?.startsWith('body.items.0.'), lines[0]);
    // 30 items with two problems each: 60, of which 20 listed.
    assert.equal(lines.at(-1), `body: ${60 - MAX_LISTED_PROBLEMS} more problems not listed`);
  });

  test('a body of 25,000 bad items costs one problem, not a line per item (it answered 7 MB)', async () => {
    const raw = `{"items":[${Array(25_000).fill('{}').join(',')}]}`;
    assert.ok(raw.length > 60_000 && raw.length < LIMIT);
    const res = await request(`${base}/items`, { method: 'POST', headers: json, body: raw });
    const body = assertErrorBody(res, 400, 'invalid_request');
    assert.deepEqual(body.message, [
      'body.items.0: missing required field "name"',
      `body: other problems are not looked for in a body of more than ${FULL_CHECK_MAX_VALUES} values`,
    ]);
    assert.ok(res.text.length < 1024, `${res.text.length} bytes`);
  });

  test('a query of many unknown parameters is bounded the same way', async () => {
    const q = Array.from({ length: 1000 }, (_, i) => `p${i}=1`).join('&');
    const res = await request(`${base}/thing?${q}`);
    const body = assertErrorBody(res, 400, 'invalid_request', '/api/v1/thing');
    assert.equal((body.message as string[]).length, 2, res.text);
    const few = await request(`${base}/thing?${Array.from({ length: 25 }, (_, i) => `p${i}=1`).join('&')}`);
    const lines = assertErrorBody(few, 400, 'invalid_request').message as string[];
    assert.equal(lines.length, MAX_LISTED_PROBLEMS + 1);
    assert.equal(lines.at(-1), `query: ${25 - MAX_LISTED_PROBLEMS} more problems not listed`);
  });

  test('a valid body still passes', async () => {
    const before = received;
    const res = await request(`${base}/items`, { method: 'POST', headers: json, body: JSON.stringify({ items: [{ name: 'a', n: 1 }] }) });
    assert.equal(res.status, 201, res.text);
    assert.equal(received, before + 1);
  });
});

/** A raw response as the helpers' Res, for assertErrorBody. */
const asRes = (r: RawResponse | null): Res => {
  assert.ok(r, 'a response came');
  return { status: r.status, headers: r.headers, text: r.body, json: () => JSON.parse(r.body) };
};

describe('framing', () => {
  const head = (method: string, path: string, headers: string[]): string => `${method} /api/v1${path} HTTP/1.1\r\nHost: t\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n`;
  const body = JSON.stringify({ items: [{ name: 'a', n: 1 }] });

  test('two Content-Length headers, the smaller first: 400 and close; what follows is never run as a request (smuggling)', async () => {
    const before = [received, things];
    const smuggled = head('GET', '/thing', []);
    const first = head('POST', '/items', ['Content-Type: application/json', `Content-Length: ${body.length}`, `Content-Length: ${body.length + smuggled.length}`]) + body;
    // The smuggled request a moment later, as its own segment: the answer, then the close.
    const o = await rawExchange(port, [first, smuggled], { gapMs: 50 });
    assertErrorBody(asRes(o.response), 400, 'invalid_request', '/api/v1/items');
    assert.match(o.response?.body ?? '', /Content-Length/);
    assert.ok(o.closed && !o.timedOut, 'the connection is closed');
    assert.equal((o.raw.match(/HTTP\/1\.1 /g) ?? []).length, 1, 'one answer only');
    // In the same segment: uWS parses it before any answer is flushed; the node closes the
    // connection at once rather than run it (no answer then).
    const same = await rawExchange(port, [first + smuggled]);
    assert.ok(same.closed && !same.timedOut, 'the connection is closed');
    assert.doesNotMatch(same.raw, /200 OK/);
    assert.deepEqual([received, things], before, 'neither request ran');
  });

  test('two Content-Length headers, the larger first: 400 and close (it hung until the idle timeout)', async () => {
    const o = await rawExchange(port, [head('POST', '/items', ['Content-Type: application/json', `Content-Length: ${body.length + 10}`, `Content-Length: ${body.length}`]) + body], { waitMs: 1500 });
    assertErrorBody(asRes(o.response), 400, 'invalid_request');
    assert.ok(o.closed && !o.timedOut);
  });

  test('the same Content-Length twice is one value', async () => {
    const o = await rawExchange(port, [head('POST', '/items', ['Content-Type: application/json', `Content-Length: ${body.length}`, `Content-Length: ${body.length}`]) + body], { stopAtResponse: true });
    assert.equal(o.response?.status, 201, o.raw);
  });

  test('a GET with a declared body over the limit is payload_too_large, read by a client still sending it (it was 200)', async () => {
    const before = things;
    const o = await rawUpload(port, head('GET', '/thing', [`Content-Length: ${LIMIT + 1}`]), LIMIT + 1, { readAfterSending: true });
    assertErrorBody(asRes(o.response), 413, 'payload_too_large', '/api/v1/thing');
    assert.equal(o.response?.headers.connection, 'close');
    assert.equal(things, before, 'the handler did not run');
  });

  test('an OPTIONS preflight with a declared body over the limit is payload_too_large (it answered 204)', async () => {
    const o = await rawUpload(port, head('OPTIONS', '/items', ['Origin: https://app.example', 'Access-Control-Request-Method: POST', `Content-Length: ${LIMIT + 1}`]), LIMIT + 1, { readAfterSending: true });
    assertErrorBody(asRes(o.response), 413, 'payload_too_large', '/api/v1/items');
  });

  test('a GET with a chunked body: 413 past the limit, answered normally under it', async () => {
    const before = things;
    const over = await rawUpload(port, head('GET', '/thing', ['Transfer-Encoding: chunked']), LIMIT + 1, { chunked: true });
    assertErrorBody(asRes(over.response), 413, 'payload_too_large');
    const under = await rawExchange(port, [head('GET', '/thing', ['Transfer-Encoding: chunked']), '5\r\nhello\r\n', '0\r\n\r\n'], { stopAtResponse: true });
    assert.equal(under.response?.status, 200, under.raw);
    assert.equal(things, before + 1, 'only the request within the limit ran');
  });

  test('a 4 MB upload is refused with 413 that the client reads, five times out of five (EPIPE or reset 4 in 5 before)', async () => {
    for (let i = 0; i < 5; i++) {
      // A client that reads its answer only once it has sent the body, as simple clients do.
      const o = await rawUpload(port, head('POST', '/items', ['Content-Type: application/json', `Content-Length: ${4 * 1024 * 1024}`]), 4 * 1024 * 1024, { readAfterSending: true });
      assertErrorBody(asRes(o.response), 413, 'payload_too_large', '/api/v1/items');
      assert.ok(o.closed, `try ${i}: closed after the body (${o.error ?? 'no error'})`);
    }
    assert.equal(lingering.now, 0, 'every lingering connection was closed');
  });

  test('a chunked upload over the limit and a 4 MB body of the wrong type are answered the same way', async () => {
    const chunked = await rawUpload(port, head('POST', '/items', ['Content-Type: application/json', 'Transfer-Encoding: chunked']), 4 * 1024 * 1024, { chunked: true, readAfterSending: true });
    assertErrorBody(asRes(chunked.response), 413, 'payload_too_large');
    const wrongType = await rawUpload(port, head('POST', '/items', ['Content-Type: text/plain', `Content-Length: ${4 * 1024 * 1024}`]), 4 * 1024 * 1024, { readAfterSending: true });
    assertErrorBody(asRes(wrongType.response), 415, 'unsupported_media_type');
  });

  test('a 415 of a body within the limit keeps the connection: the next request on it is answered', async () => {
    const wrong = head('POST', '/items', ['Content-Type: text/plain', `Content-Length: ${body.length}`]) + body;
    const o = await rawExchange(port, [wrong + head('GET', '/thing', [])], { waitMs: 500 });
    assert.equal(o.response?.status, 415);
    assert.equal((o.raw.match(/HTTP\/1\.1 200 OK/g) ?? []).length, 1, o.raw);
  });

  test('a request target over 8 kB is uri_too_long (414), without echoing it', async () => {
    const longQuery = await request(`${base}/thing?q=${'x'.repeat(9000)}`);
    assertErrorBody(longQuery, 414, 'uri_too_long', '/api/v1/thing');
    const longPath = await request(`${base}/${'p'.repeat(9000)}`);
    const b = assertErrorBody(longPath, 414, 'uri_too_long');
    assert.ok((b.path as string).length < 300, 'the path is shortened');
    const fine = await request(`${base}/thing?q=${'x'.repeat(7000)}`);
    assert.equal(fine.status, 200);
  });
});
