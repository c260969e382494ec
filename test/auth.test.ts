/**
 * Who is calling and what they may do: every 401/403/404 of the identity layer, through real HTTP
 * against a started node, with real tokens from its development IdP (and forged ones).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SignJWT, decodeProtectedHeader, exportJWK, generateKeyPair, base64url } from 'jose';
import crypto from 'node:crypto';
import { assertErrorBody, bearer, request } from './helpers/http.ts';
import { startTestNode, type TestNode } from './helpers/processes.ts';
import { idToken, machineToken, revoke, userToken } from './helpers/tokens.ts';

let node: TestNode;
const tok: Record<string, string> = {};

before(async () => {
  node = await startTestNode();
  tok.bob = await userToken(node.idp, 'bob');
  tok.bobWeb = await userToken(node.idp, 'bob', 'chat-web');
  tok.alice = await userToken(node.idp, 'alice', 'chat-web');
  tok.carol = await userToken(node.idp, 'carol', 'chat-web');
  tok.frank = await userToken(node.idp, 'frank', 'chat-web');
  tok.mallory = await userToken(node.idp, 'mallory', 'chat-web');
  tok.dave = await userToken(node.idp, 'dave', 'chat-web');
  tok.machine = await machineToken(node.idp, 'acme-support-backend');
  tok.reader = await machineToken(node.idp, 'acme-support-reader');
});
after(() => node.stop());

const appCaps = (t = 'acme', a = 'support') => `/tenants/${t}/applications/${a}/me/capabilities`;
const get = (path: string, token?: string, headers: Record<string, string> = {}) =>
  request(`${node.api}${path}`, { headers: { ...(token ? bearer(token) : {}), ...headers } });

describe('tokens', () => {
  test('a missing or non-Bearer Authorization header is invalid_token (401)', async () => {
    assertErrorBody(await get(appCaps()), 401, 'invalid_token', `/api/v1${appCaps()}`);
    assertErrorBody(await get(appCaps(), undefined, { Authorization: 'Basic Ym9iOnB3' }), 401, 'invalid_token');
    assertErrorBody(await get(appCaps(), undefined, { Authorization: 'Bearer' }), 401, 'invalid_token');
  });

  test('a malformed token is invalid_token', async () => {
    for (const t of ['garbage', 'a.b.c', 'eyJhbGciOiJFUzI1NiJ9.e30', `${tok.bob}x`]) {
      assertErrorBody(await get(appCaps(), t), 401, 'invalid_token');
    }
  });

  test('alg none is refused', async () => {
    const claims = JSON.parse(Buffer.from(tok.bob!.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    const forged = `${base64url.encode(JSON.stringify({ alg: 'none', typ: 'at+jwt' }))}.${base64url.encode(JSON.stringify(claims))}.`;
    assertErrorBody(await get(appCaps(), forged), 401, 'invalid_token');
  });

  test('HS256 signed with the IdP public key is refused', async () => {
    const jwks = (await (await fetch(`${node.idp}/jwks.json`)).json()) as { keys: Record<string, unknown>[] };
    const kid = decodeProtectedHeader(tok.bob!).kid as string;
    const pub = jwks.keys.find((k) => k.kid === kid)!;
    const claims = JSON.parse(Buffer.from(tok.bob!.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    for (const secret of [JSON.stringify(pub), crypto.createPublicKey({ key: pub as crypto.JsonWebKey, format: 'jwk' }).export({ type: 'spki', format: 'pem' }).toString()]) {
      const forged = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid }).sign(new TextEncoder().encode(secret));
      const res = await get(appCaps(), forged);
      assertErrorBody(res, 401, 'invalid_token');
      assert.match(res.json().message, /algorithm/);
    }
  });

  test('a token signed by an unknown key is refused, whatever kid it claims', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    void (await exportJWK(publicKey));
    const claims = JSON.parse(Buffer.from(tok.bob!.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    const realKid = decodeProtectedHeader(tok.bob!).kid as string;
    for (const kid of [realKid, 'someone-else']) {
      const forged = await new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid }).sign(privateKey);
      assertErrorBody(await get(appCaps(), forged), 401, 'invalid_token');
    }
  });

  test("the user's own token (an ID token for the app) is not a chat token", async () => {
    const own = await idToken(node.idp, 'bob');
    const res = await get(appCaps(), own);
    assertErrorBody(res, 401, 'invalid_token');
  });

  test('a revoked token is token_revoked from the moment it is revoked', async () => {
    const t = await userToken(node.idp, 'bob');
    assert.equal((await get(appCaps(), t)).status, 200);
    await revoke(node.idp, t, 'acme-support-web');
    assertErrorBody(await get(appCaps(), t), 401, 'token_revoked');
    const m = await machineToken(node.idp, 'acme-support-backend');
    assert.equal((await get(appCaps(), m)).status, 200);
    await revoke(node.idp, m, 'acme-support-backend');
    assertErrorBody(await get(appCaps(), m), 401, 'token_revoked');
  });
});

describe('principals and scopes', () => {
  test('a machine token lacking the scope is insufficient_scope (403)', async () => {
    const res = await get(appCaps(), tok.reader);
    assertErrorBody(res, 403, 'insufficient_scope');
    assert.match(res.json().message, /chat:sync/);
  });

  test('user-only routes refuse machines with principal_not_allowed', async () => {
    for (const p of ['/me', '/me/tenants', '/tenants/acme/admin/applications']) {
      assertErrorBody(await get(p, tok.machine), 403, 'principal_not_allowed', `/api/v1${p}`);
    }
  });

  test('machine tokens are bound to their tenant and application', async () => {
    assertErrorBody(await get(appCaps('globex', 'portal'), tok.machine), 403, 'client_context_mismatch');
    assertErrorBody(await get(appCaps('acme', 'internal'), tok.machine), 403, 'client_context_mismatch');
    assertErrorBody(await get('/tenants/globex/me/capabilities', tok.machine), 403, 'client_context_mismatch');
    const ok = await get(appCaps(), tok.machine);
    assert.equal(ok.status, 200);
    assert.equal(ok.json().principal_type, 'machine');
    assert.ok(ok.json().capabilities.includes('messages.send'));
    assert.ok(!ok.json().capabilities.includes('messages.delete'), 'machines never delete messages');
    assert.ok(!ok.json().capabilities.includes('messages.update'), 'machines never edit messages');
  });

  test("an application client's user token is bound to that application", async () => {
    assertErrorBody(await get(appCaps('acme', 'internal'), tok.bob), 403, 'client_context_mismatch');
    assertErrorBody(await get(appCaps('globex', 'portal'), tok.bob), 403, 'client_context_mismatch');
    assert.equal((await get(appCaps(), tok.bob)).status, 200);
  });
});

describe('context checks', () => {
  test('a user who is not an active tenant member is not_tenant_member', async () => {
    assertErrorBody(await get('/tenants/acme/me/capabilities', tok.mallory), 403, 'not_tenant_member');
    assertErrorBody(await get(appCaps(), tok.mallory), 403, 'not_tenant_member');
    assertErrorBody(await get('/tenants/acme/me/capabilities', tok.dave), 403, 'not_tenant_member');
  });

  test('a user without access to the application is no_application_access', async () => {
    assertErrorBody(await get(appCaps('acme', 'internal'), tok.frank), 403, 'no_application_access');
  });

  test('a missing or chat-disabled application is application_not_found (404)', async () => {
    assertErrorBody(await get(appCaps('acme', 'legacy'), tok.bobWeb), 404, 'application_not_found');
    assertErrorBody(await get(appCaps('acme', 'nope'), tok.bobWeb), 404, 'application_not_found');
    assertErrorBody(await get(appCaps('globex', 'support'), tok.alice), 404, 'application_not_found');
  });

  test('a suspended, chat-disabled or unknown tenant is tenant_not_available', async () => {
    for (const t of ['initech', 'umbrella', 'nope']) {
      assertErrorBody(await get(`/tenants/${t}/me/capabilities`, tok.alice), 403, 'tenant_not_available');
    }
    assertErrorBody(await get(appCaps('initech', 'desk'), tok.alice), 403, 'tenant_not_available');
  });

  test('missing_capability names the capability', async () => {
    const res = await get('/tenants/acme/admin/applications', tok.bobWeb);
    assertErrorBody(res, 403, 'missing_capability');
    assert.match(res.json().message, /administration\.applications\.read/);
  });
});

describe('identity routes', () => {
  test('GET /me describes the signed-in user and the token', async () => {
    const res = await get('/me', tok.bob);
    assert.equal(res.status, 200);
    const me = res.json();
    assert.equal(me.user_id, 'bob');
    assert.equal(me.display_name, 'Bob Baker');
    assert.equal(me.client_id, 'acme-support-web');
    assert.deepEqual(me.scopes, ['chat:access']);
    assert.equal(me.tenant_id, 'acme');
    assert.equal(me.application_id, 'support');
    assert.ok(Date.parse(me.token_expires_at) - Date.now() <= 600_000);
    const frank = (await get('/me', tok.frank)).json();
    assert.equal(frank.display_name, 'frank', 'display_name falls back to the user id');
    assert.equal(frank.tenant_id, null);
  });

  test('GET /me/tenants lists the chat-enabled tenants the user is an active member of', async () => {
    const res = await get('/me/tenants', tok.alice);
    assert.equal(res.status, 200);
    assert.deepEqual(res.json().items.map((t: { tenant_id: string }) => t.tenant_id).sort(), ['acme', 'globex']);
    for (const t of res.json().items) assert.deepEqual(Object.keys(t).sort(), ['logo_url', 'name', 'slug', 'tenant_id']);
    const bound = await get('/me/tenants', tok.bob);
    assert.deepEqual(bound.json().items.map((t: { tenant_id: string }) => t.tenant_id), ['acme']);
    assert.deepEqual((await get('/me/tenants', tok.mallory)).json().items, []);
  });

  test('tenant capabilities: owner holds every administration key, members none', async () => {
    const alice = (await get('/tenants/acme/me/capabilities', tok.alice)).json();
    assert.equal(alice.application_id, null);
    assert.equal(alice.principal_type, 'user');
    assert.ok(alice.roles.includes('tenant_owner'));
    assert.ok(alice.capabilities.includes('administration.applications.read'));
    assert.ok(alice.capabilities.includes('administration.settings.manage'));
    assert.ok(alice.capabilities.every((c: string) => c.startsWith('administration.')), 'tenant level lists administration.* only');
    const bob = (await get('/tenants/acme/me/capabilities', tok.bobWeb)).json();
    assert.deepEqual(bob.capabilities, []);
  });

  test('application capabilities reflect application roles', async () => {
    const carol = (await get(appCaps(), tok.carol)).json();
    assert.ok(carol.roles.includes('app_moderator'));
    assert.ok(carol.capabilities.includes('messages.delete'));
    const frank = (await get(appCaps(), tok.frank)).json();
    assert.deepEqual(frank.capabilities, ['conversations.read', 'messages.read']);
  });

  test('admin applications lists the tenant applications for holders of the capability', async () => {
    const res = await get('/tenants/acme/admin/applications', tok.alice);
    assert.equal(res.status, 200);
    const ids = res.json().items.map((a: { application_id: string }) => a.application_id).sort();
    assert.deepEqual(ids, ['internal', 'legacy', 'support']);
    const legacy = res.json().items.find((a: { application_id: string }) => a.application_id === 'legacy');
    assert.equal(legacy.chat_enabled, false);
    assert.deepEqual(Object.keys(legacy).sort(), ['access_mode', 'application_id', 'chat_enabled', 'identity_status', 'logo_url', 'name', 'slug', 'synced_at', 'type']);
  });

  test('the VAPID key route needs no token', async () => {
    const res = await get('/notifications/vapid-public-key');
    assert.equal(res.status, 200);
    assert.match(res.json().public_key, /^[A-Za-z0-9_-]{80,}$/);
  });

  test('verified tokens are cached: repeated calls do not verify again', async () => {
    const scrape = async () => {
      const text = await (await fetch(`http://127.0.0.1:${node.metricsPort}/metrics`)).text();
      const n = (r: string) => Number(/chat_token_verifications_total\{result="(\w+)"\} (\d+)/g.exec(text) && new RegExp(`chat_token_verifications_total\\{result="${r}"\\} (\\d+)`).exec(text)?.[1] || 0);
      return { verified: n('verified'), cached: n('cached') };
    };
    const t = await userToken(node.idp, 'bob');
    const before = await scrape();
    for (let i = 0; i < 5; i++) assert.equal((await get(appCaps(), t)).status, 200);
    const afterward = await scrape();
    assert.equal(afterward.verified - before.verified, 1);
    assert.ok(afterward.cached - before.cached >= 4);
  });
});
