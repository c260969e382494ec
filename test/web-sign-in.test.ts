/**
 * The web app's sign-in routes on a started node with the embedded IdP: the authorization code
 * (PKCE) traded for a chat token, renewal, sign-out, the contract's sign-in errors
 * (invalid_redirect_uri, invalid_grant, invalid_id_token, chat_access_not_granted,
 * identity_unavailable), no CORS for other origins, and the application picker's route.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { assertErrorBody, bearer, request, type Res } from './helpers/http.ts';
import { freePort, startTestNode, type TestNode } from './helpers/processes.ts';

const json = (body: unknown): { method: string; headers: Record<string, string>; body: string } => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify(body),
});

describe('web app sign-in', () => {
  let node: TestNode;
  let appUrl: string;

  before(async () => {
    node = await startTestNode();
    appUrl = `${node.origin}/app/`;
  });
  after(async () => {
    await node.stop();
  });

  /** What the browser does at the login page: returns the code and the PKCE verifier. */
  async function authorize(userId: string): Promise<{ code: string; verifier: string }> {
    const verifier = randomBytes(32).toString('base64url');
    const fields = {
      response_type: 'code',
      client_id: 'chat-web',
      redirect_uri: appUrl,
      state: 's',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      user_id: userId,
    };
    const res = await request(`${node.idp}/oauth/authorize`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
    assert.equal(res.status, 303, res.text);
    return { code: new URL(String(res.headers.location)).searchParams.get('code') ?? '', verifier };
  }

  const signIn = (code: string, verifier: string, redirect = appUrl): Promise<Res> =>
    request(`${node.origin}/auth/sign-in`, json({ code, code_verifier: verifier, redirect_uri: redirect }));

  test('config names the authorization endpoint and the client', async () => {
    const res = await request(`${node.origin}/auth/config`);
    assert.equal(res.status, 200);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.deepEqual(res.json(), { authorization_endpoint: `${node.idp}/oauth/authorize`, client_id: 'chat-web', scope: 'openid' });
  });

  test('a code becomes a chat token for the user; the code works once', async () => {
    const { code, verifier } = await authorize('bob');
    const res = await signIn(code, verifier);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers['cache-control'], 'no-store');
    const s = res.json() as { access_token: string; token_type: string; expires_in: number; id_token: string; id_token_expires_at: string; user_id: string };
    assert.equal(s.user_id, 'bob');
    assert.equal(s.token_type, 'Bearer');
    assert.ok(s.expires_in > 590 && s.expires_in <= 600, String(s.expires_in));
    assert.ok(Date.parse(s.id_token_expires_at) > Date.now() + 3500_000);
    const me = await request(`${node.api}/me`, { headers: bearer(s.access_token) });
    assert.equal(me.status, 200);
    assert.equal(me.json().user_id, 'bob');
    assert.equal(me.json().client_id, 'chat-web');
    assert.equal(me.json().tenant_id, null);
    assertErrorBody(await signIn(code, verifier), 400, 'invalid_grant');
  });

  test('a wrong verifier or a made-up code: invalid_grant', async () => {
    const { code } = await authorize('bob');
    assertErrorBody(await signIn(code, randomBytes(32).toString('base64url')), 400, 'invalid_grant');
    assertErrorBody(await signIn('made-up', randomBytes(32).toString('base64url')), 400, 'invalid_grant');
  });

  test("a redirect URI that is not the app's own: invalid_redirect_uri, before the IdP is asked", async () => {
    const { code, verifier } = await authorize('bob');
    for (const other of ['https://evil.example/app/', `${node.origin}/elsewhere/`, `${node.origin}/app/?x=1`]) {
      assertErrorBody(await signIn(code, verifier, other), 400, 'invalid_redirect_uri');
    }
    // Another loopback name for the same app is the app (a person may type localhost).
    const local = `http://localhost:${node.port}/app/`;
    const res = await signIn(code, verifier, local);
    assertErrorBody(res, 400, 'invalid_grant'); // accepted by the node; the IdP wants the URI of the authorization request
  });

  test('a disabled user: chat_access_not_granted', async () => {
    const { code, verifier } = await authorize('oscar');
    assertErrorBody(await signIn(code, verifier), 403, 'chat_access_not_granted');
  });

  test('malformed requests: invalid_request, with every problem', async () => {
    const res = await request(`${node.origin}/auth/sign-in`, json({ code: '', code_verifier: 'short', redirect_uri: appUrl, extra: 1 }));
    const body = assertErrorBody(res, 400, 'invalid_request');
    assert.ok(Array.isArray(body.message) && body.message.length >= 3, JSON.stringify(body.message));
  });

  test('renewal gives a fresh token; sign-out revokes both tokens; a dead ID token is invalid_id_token', async () => {
    const { code, verifier } = await authorize('carol');
    const s = (await signIn(code, verifier)).json() as { access_token: string; id_token: string };
    const renewed = await request(`${node.origin}/auth/renew`, json({ id_token: s.id_token }));
    assert.equal(renewed.status, 200, renewed.text);
    const r = renewed.json() as { access_token: string; user_id: string; id_token: string };
    assert.notEqual(r.access_token, s.access_token);
    assert.equal(r.user_id, 'carol');
    assert.equal(r.id_token, s.id_token);
    assertErrorBody(await request(`${node.origin}/auth/renew`, json({ id_token: 'garbage' })), 401, 'invalid_id_token');

    const out = await request(`${node.origin}/auth/sign-out`, json({ tokens: [s.id_token, r.access_token] }));
    assert.equal(out.status, 204, out.text);
    assertErrorBody(await request(`${node.api}/me`, { headers: bearer(r.access_token) }), 401, 'token_revoked');
    assertErrorBody(await request(`${node.origin}/auth/renew`, json({ id_token: s.id_token })), 401, 'invalid_id_token');
    // Signing out again (or with junk) is not an error.
    assert.equal((await request(`${node.origin}/auth/sign-out`, json({ tokens: [s.id_token, 'junk'] }))).status, 204);
  });

  test('other origins, registered ones included, get no CORS headers on the sign-in routes and the application picker', async () => {
    for (const path of ['/auth/config', '/auth/sign-in', '/auth/renew', '/auth/sign-out', '/tenants/acme/applications']) {
      const pre = await request(`${path.startsWith('/auth') ? node.origin : node.api}${path}`, {
        method: 'OPTIONS',
        headers: { Origin: 'https://support.acme.test', 'Access-Control-Request-Method': path === '/auth/config' || path.startsWith('/tenants') ? 'GET' : 'POST' },
      });
      assert.equal(pre.status, 204);
      assert.equal(pre.headers['access-control-allow-origin'], undefined, path);
    }
    const res = await request(`${node.origin}/auth/config`, { headers: { Origin: 'https://support.acme.test' } });
    assert.equal(res.headers['access-control-allow-origin'], undefined);
  });

  test('the sign-in routes are no operations of the API: /api/v1/auth/... is 404, the document does not list them', async () => {
    assertErrorBody(await request(`${node.api}/auth/config`), 404, 'not_found');
    assertErrorBody(await request(`${node.api}/auth/renew`, json({ id_token: 'a.b.c' })), 404, 'not_found');
    assertErrorBody(await request(`${node.origin}/auth/nothing`), 404, 'not_found');
    const doc = JSON.parse((await request(`${node.origin}/openapi.json`)).text) as { paths: Record<string, unknown> };
    assert.deepEqual(Object.keys(doc.paths).filter((p) => p.startsWith('/auth')), []);
  });

  test('the application picker lists the applications the user can chat in', async () => {
    const tokenOf = async (user: string): Promise<string> => {
      const { code, verifier } = await authorize(user);
      return ((await signIn(code, verifier)).json() as { access_token: string }).access_token;
    };
    const ids = async (user: string): Promise<string[]> => {
      const res = await request(`${node.api}/tenants/acme/applications`, { headers: bearer(await tokenOf(user)) });
      assert.equal(res.status, 200, res.text);
      return (res.json() as { items: { application_id: string; name: string }[] }).items.map((a) => a.application_id);
    };
    assert.deepEqual(await ids('bob'), ['support']);
    assert.deepEqual(await ids('grace'), ['support', 'internal']);
    assertErrorBody(await request(`${node.api}/tenants/acme/applications`, { headers: bearer(await tokenOf('mallory')) }), 403, 'not_tenant_member');
    const machine = (await request(`${node.idp}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&client_id=acme-support-backend&client_secret=acme-support-backend-secret',
    })).json() as { access_token: string };
    assertErrorBody(await request(`${node.api}/tenants/acme/applications`, { headers: bearer(machine.access_token) }), 403, 'principal_not_allowed');
  });
});

describe('web app sign-in with the IdP out of reach', () => {
  let node: TestNode;
  before(async () => {
    node = await startTestNode({ CHAT_IDP: 'http', CHAT_IDP_URL: `http://127.0.0.1:${await freePort()}`, CHAT_IDP_TIMEOUT_MS: '500' });
  });
  after(async () => {
    await node.stop();
  });

  test('config, sign-in and renewal answer identity_unavailable; a token that is no JWT is refused without asking', async () => {
    assertErrorBody(await request(`${node.origin}/auth/config`), 503, 'identity_unavailable');
    const verifier = randomBytes(32).toString('base64url');
    assertErrorBody(await request(`${node.origin}/auth/sign-in`, json({ code: 'c', code_verifier: verifier, redirect_uri: `${node.origin}/app/` })), 503, 'identity_unavailable');
    assertErrorBody(await request(`${node.origin}/auth/renew`, json({ id_token: 'a.b.c' })), 401, 'invalid_id_token');
    const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const jwt = `${part({ alg: 'ES256', typ: 'JWT' })}.${part({ sub: 'bob', exp: Math.floor(Date.now() / 1000) + 600 })}.sig`;
    assertErrorBody(await request(`${node.origin}/auth/renew`, json({ id_token: jwt })), 503, 'identity_unavailable');
  });
});
