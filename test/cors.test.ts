/**
 * Browser access (contract, Authentication → CORS): an application's registered origins may call
 * its application routes; the VAPID key is readable from anywhere (GET only); account, tenant
 * capability and administration routes are for the service's own web app and never answer CORS.
 * An origin that is not allowed gets no Access-Control-* header at all.
 *
 * Not covered yet: the tenant-level policy (presence, push devices) has no route.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { assertErrorBody, bearer, request, type Res } from './helpers/http.ts';
import { startTestNode, type TestNode } from './helpers/processes.ts';
import { userToken } from './helpers/tokens.ts';

const SUPPORT_ORIGINS = ['http://localhost:3000', 'https://support.acme.test'];
const INTERNAL_ORIGIN = 'https://internal.acme.test';
const SUPPORT_CAPS = '/tenants/acme/applications/support/me/capabilities';
const INTERNAL_CAPS = '/tenants/acme/applications/internal/me/capabilities';
const VAPID = '/notifications/vapid-public-key';
const NO_CORS_ROUTES = ['/me', '/me/tenants', '/tenants/acme/me/capabilities', '/tenants/acme/admin/applications'];

let node: TestNode;
let bob: string;
let alice: string;

before(async () => {
  node = await startTestNode();
  bob = await userToken(node.idp, 'bob');
  alice = await userToken(node.idp, 'alice', 'chat-web');
});
after(async () => {
  await node.stop();
  fs.rmSync(node.dataDir, { recursive: true, force: true });
});

function preflight(path: string, origin: string, method = 'GET', headers = 'authorization, content-type'): Promise<Res> {
  return request(`${node.api}${path}`, {
    method: 'OPTIONS',
    headers: { Origin: origin, 'Access-Control-Request-Method': method, 'Access-Control-Request-Headers': headers },
  });
}

function get(path: string, origin: string, token?: string): Promise<Res> {
  return request(`${node.api}${path}`, { headers: { Origin: origin, ...(token ? bearer(token) : {}) } });
}

const list = (v: string | string[] | undefined): string[] =>
  (Array.isArray(v) ? v.join(',') : (v ?? '')).split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);

function assertNoCors(res: Res, what: string): void {
  const cors = Object.keys(res.headers).filter((h) => h.startsWith('access-control-'));
  assert.deepEqual(cors, [], `${what}: unexpected ${cors.join(', ')}`);
}

function assertAllowedActual(res: Res, origin: string): void {
  assert.equal(res.headers['access-control-allow-origin'], origin);
  assert.ok(list(res.headers['access-control-expose-headers']).includes('retry-after'), `expose: ${String(res.headers['access-control-expose-headers'])}`);
  assert.ok(list(res.headers.vary).includes('origin'), `vary: ${String(res.headers.vary)}`);
  assert.equal(res.headers['access-control-allow-credentials'], undefined, 'requests from registered origins carry no cookies');
}

describe('application routes', () => {
  test("a preflight from a registered origin of the application's client is answered", async () => {
    for (const origin of SUPPORT_ORIGINS) {
      const res = await preflight(SUPPORT_CAPS, origin);
      assert.equal(res.status, 204);
      assert.equal(res.text, '');
      assert.equal(res.headers['access-control-allow-origin'], origin);
      assert.equal(res.headers['access-control-allow-methods'], 'GET, POST, PUT, PATCH, DELETE');
      const allowed = list(res.headers['access-control-allow-headers']);
      assert.ok(allowed.includes('content-type') && allowed.includes('authorization'), `allow-headers: ${allowed.join()}`);
      assert.match(String(res.headers['access-control-max-age']), /^[1-9]\d*$/);
      assert.ok(list(res.headers.vary).includes('origin'), `vary: ${String(res.headers.vary)}`);
      assert.equal(res.headers['access-control-allow-credentials'], undefined);
    }
  });

  test('a preflight from an unregistered origin gets no CORS headers', async () => {
    for (const origin of ['http://evil.test', 'http://localhost:3001', 'https://localhost:3000', 'http://localhost:3000/', 'null', 'HTTP://LOCALHOST:3000']) {
      assertNoCors(await preflight(SUPPORT_CAPS, origin), origin);
    }
  });

  test("an origin of another application of the tenant is not allowed on this application's routes", async () => {
    assertNoCors(await preflight(SUPPORT_CAPS, INTERNAL_ORIGIN), 'preflight');
    assertNoCors(await get(SUPPORT_CAPS, INTERNAL_ORIGIN, bob), 'GET');
    // ... while on its own application's routes it is.
    assert.equal((await preflight(INTERNAL_CAPS, INTERNAL_ORIGIN)).headers['access-control-allow-origin'], INTERNAL_ORIGIN);
    assertNoCors(await preflight(INTERNAL_CAPS, SUPPORT_ORIGINS[0]!), 'support origin on internal');
  });

  test('an application that does not exist allows no origin', async () => {
    assertNoCors(await preflight('/tenants/acme/applications/nope/me/capabilities', SUPPORT_ORIGINS[0]!), 'unknown application');
    assertNoCors(await preflight('/tenants/nope/applications/support/me/capabilities', SUPPORT_ORIGINS[0]!), 'unknown tenant');
  });

  test('the actual response to a registered origin carries the origin and exposes Retry-After', async () => {
    const ok = await get(SUPPORT_CAPS, SUPPORT_ORIGINS[0]!, bob);
    assert.equal(ok.status, 200, ok.text);
    assertAllowedActual(ok, SUPPORT_ORIGINS[0]!);
  });

  test('error responses carry the CORS headers too, so the browser can read them', async () => {
    const noToken = await get(SUPPORT_CAPS, SUPPORT_ORIGINS[1]!);
    assertErrorBody(noToken, 401, 'invalid_token');
    assertAllowedActual(noToken, SUPPORT_ORIGINS[1]!);
    const badToken = await get(SUPPORT_CAPS, SUPPORT_ORIGINS[1]!, 'garbage');
    assertErrorBody(badToken, 401, 'invalid_token');
    assertAllowedActual(badToken, SUPPORT_ORIGINS[1]!);
    const mallory = await get(SUPPORT_CAPS, SUPPORT_ORIGINS[0]!, await userToken(node.idp, 'mallory', 'chat-web'));
    assertErrorBody(mallory, 403, 'not_tenant_member');
    assertAllowedActual(mallory, SUPPORT_ORIGINS[0]!);
  });

  test('the actual response to an unregistered origin carries no CORS headers', async () => {
    const res = await get(SUPPORT_CAPS, 'http://evil.test', bob);
    assert.equal(res.status, 200);
    assertNoCors(res, 'GET from evil.test');
    assertNoCors(await get(SUPPORT_CAPS, 'http://evil.test'), '401 to evil.test');
  });
});

describe('the VAPID key route', () => {
  test('any origin may GET it: Access-Control-Allow-Origin is *', async () => {
    for (const origin of ['http://evil.test', SUPPORT_ORIGINS[0]!]) {
      const res = await get(VAPID, origin);
      assert.equal(res.status, 200);
      assert.equal(res.headers['access-control-allow-origin'], '*');
      assert.equal(res.headers['access-control-allow-credentials'], undefined);
    }
  });

  test('its preflight allows GET only; a preflight asking for POST gets no CORS headers', async () => {
    const res = await preflight(VAPID, 'http://evil.test', 'GET', 'content-type');
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-origin'], '*');
    assert.equal(res.headers['access-control-allow-methods'], 'GET');
    assert.equal(res.headers['access-control-allow-credentials'], undefined);
    for (const method of ['POST', 'DELETE', 'PUT']) assertNoCors(await preflight(VAPID, 'http://evil.test', method), `preflight ${method}`);
  });
});

describe("routes for the service's own web app", () => {
  test('account, tenant capability and administration routes answer no CORS, even to a registered origin', async () => {
    for (const path of NO_CORS_ROUTES) {
      const res = await get(path, SUPPORT_ORIGINS[0]!, alice);
      assert.equal(res.status, 200, `${path}: ${res.text}`);
      assertNoCors(res, `GET ${path}`);
      assertNoCors(await get(path, SUPPORT_ORIGINS[0]!), `401 on ${path}`);
      const pre = await preflight(path, SUPPORT_ORIGINS[0]!);
      assert.equal(pre.status, 204);
      assertNoCors(pre, `preflight ${path}`);
    }
  });
});

test('a preflight on an unknown path is a 404 with the error body', async () => {
  const res = await preflight('/no/such/route', SUPPORT_ORIGINS[0]!);
  assertErrorBody(res, 404, 'not_found', '/api/v1/no/such/route');
  assertNoCors(res, 'unknown path');
});
