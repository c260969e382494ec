/**
 * The development IdP's authorization endpoint (authorization code with PKCE) through its HTTP
 * handler: the login page, the redirect with a code, the code's redemption for an ID token, and
 * every way the flow refuses (unregistered redirect URI shown on a page, never redirected; wrong
 * verifier, reused or foreign code: invalid_grant).
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { DevIdp } from '../src/idp/dev-idp.ts';
import { loadFixture } from '../src/idp/fixture.ts';
import { createIdpHandler } from '../src/idp/http.ts';
import { DEFAULT_FIXTURE } from '../src/config/index.ts';
import type { IdpHttpResponse } from '../src/idp/http-types.ts';

const ISSUER = 'http://127.0.0.1:9999/idp';
const REDIRECT = 'http://127.0.0.1:43210/app/';

async function setup(devLogin = true) {
  let now = Date.now();
  const idp = new DevIdp(await loadFixture(DEFAULT_FIXTURE), { issuer: ISSUER, devLogin, now: () => now });
  const handler = createIdpHandler(idp);
  const call = (method: string, path: string, query: Record<string, string> = {}, form?: Record<string, string>): Promise<IdpHttpResponse> =>
    handler({
      method,
      path,
      query: new URLSearchParams(query),
      headers: form ? { 'content-type': 'application/x-www-form-urlencoded' } : {},
      body: Buffer.from(form ? new URLSearchParams(form).toString() : ''),
    });
  return { idp, call, advance: (ms: number) => (now += ms) };
}

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

const authorizeQuery = (challenge: string, extra: Record<string, string> = {}) => ({
  response_type: 'code',
  client_id: 'chat-web',
  redirect_uri: REDIRECT,
  state: 'st-1',
  code_challenge: challenge,
  code_challenge_method: 'S256',
  scope: 'openid',
  ...extra,
});

describe('development IdP: authorization code with PKCE', () => {
  test('discovery names the authorization endpoint only with dev login', async () => {
    const on = await setup(true);
    const doc = JSON.parse((await on.call('GET', '/.well-known/openid-configuration')).body) as Record<string, unknown>;
    assert.equal(doc.authorization_endpoint, `${ISSUER}/oauth/authorize`);
    assert.deepEqual(doc.code_challenge_methods_supported, ['S256']);
    const off = await setup(false);
    const doc2 = JSON.parse((await off.call('GET', '/.well-known/openid-configuration')).body) as Record<string, unknown>;
    assert.equal(doc2.authorization_endpoint, undefined);
    assert.equal((await off.call('GET', '/oauth/authorize', authorizeQuery(pkce().challenge))).status, 404);
  });

  test('login page lists the users; choosing one redirects with a code that yields an ID token once', async () => {
    const { call } = await setup();
    const { verifier, challenge } = pkce();
    const page = await call('GET', '/oauth/authorize', authorizeQuery(challenge));
    assert.equal(page.status, 200);
    assert.match(page.headers['content-type'] ?? '', /text\/html/);
    assert.match(page.headers['content-security-policy'] ?? '', /default-src 'none'/);
    assert.match(page.headers['content-security-policy'] ?? '', /form-action 'self' http:\/\/127\.0\.0\.1:43210/);
    for (const name of ['Alice', 'Bob Baker', 'mallory']) assert.ok(page.body.includes(name), `page lists ${name}`);
    assert.ok(page.body.includes('value="st-1"'), 'state is carried');

    const approved = await call('POST', '/oauth/authorize', {}, Object.assign(authorizeQuery(challenge), { user_id: 'bob' }));
    assert.equal(approved.status, 303);
    const location = new URL(approved.headers.location ?? '');
    assert.equal(`${location.origin}${location.pathname}`, REDIRECT);
    assert.equal(location.searchParams.get('state'), 'st-1');
    const code = location.searchParams.get('code') ?? '';
    assert.ok(code.length >= 40);

    const redeem = (fields: Record<string, string>) =>
      call('POST', '/oauth/token', {}, Object.assign({ grant_type: 'authorization_code', client_id: 'chat-web', code, redirect_uri: REDIRECT, code_verifier: verifier }, fields));
    const ok = await redeem({});
    assert.equal(ok.status, 200, ok.body);
    const body = JSON.parse(ok.body) as { id_token: string; expires_in: number };
    const jwks = JSON.parse((await call('GET', '/jwks.json')).body) as JSONWebKeySet;
    const { payload } = await jwtVerify(body.id_token, createLocalJWKSet(jwks), { issuer: ISSUER, audience: 'chat-web', typ: 'JWT' });
    assert.equal(payload.sub, 'bob');
    assert.equal(body.expires_in, 3600);

    const again = await redeem({});
    assert.equal(again.status, 400);
    assert.equal(JSON.parse(again.body).error, 'invalid_grant');
  });

  test('a wrong verifier, another redirect URI, an expired code: invalid_grant, and the code is spent', async () => {
    const { call, advance } = await setup();
    const codeFor = async (challenge: string): Promise<string> => {
      const r = await call('POST', '/oauth/authorize', {}, Object.assign(authorizeQuery(challenge), { user_id: 'alice' }));
      return new URL(r.headers.location ?? '').searchParams.get('code') ?? '';
    };
    const redeem = (code: string, verifier: string, redirect = REDIRECT) =>
      call('POST', '/oauth/token', {}, { grant_type: 'authorization_code', client_id: 'chat-web', code, redirect_uri: redirect, code_verifier: verifier });
    const a = pkce();
    const code = await codeFor(a.challenge);
    assert.equal(JSON.parse((await redeem(code, pkce().verifier)).body).error, 'invalid_grant');
    assert.equal(JSON.parse((await redeem(code, a.verifier)).body).error, 'invalid_grant', 'spent by the failed attempt');
    const b = pkce();
    assert.equal(JSON.parse((await redeem(await codeFor(b.challenge), b.verifier, 'http://127.0.0.1:1/app/')).body).error, 'invalid_grant');
    const c = pkce();
    const late = await codeFor(c.challenge);
    advance(61_000);
    assert.equal(JSON.parse((await redeem(late, c.verifier)).body).error, 'invalid_grant');
    const app = await call('POST', '/oauth/token', {}, { grant_type: 'authorization_code', client_id: 'acme-internal-web', code: 'x', redirect_uri: REDIRECT, code_verifier: c.verifier });
    assert.equal(JSON.parse(app.body).error, 'unauthorized_client');
  });

  test('an unregistered redirect URI or unknown client is shown on a page, never redirected', async () => {
    const { call } = await setup();
    const { challenge } = pkce();
    for (const redirect of ['https://evil.example/app/', 'http://127.0.0.1:43210/other/', 'http://127.0.0.1.evil.example/app/']) {
      const res = await call('GET', '/oauth/authorize', authorizeQuery(challenge, { redirect_uri: redirect }));
      assert.equal(res.status, 400, redirect);
      assert.equal(res.headers.location, undefined);
      assert.match(res.body, /invalid_redirect_uri/);
    }
    const post = await call('POST', '/oauth/authorize', {}, Object.assign(authorizeQuery(challenge, { redirect_uri: 'https://evil.example/' }), { user_id: 'bob' }));
    assert.equal(post.status, 400);
    assert.equal(post.headers.location, undefined);
    const unknown = await call('GET', '/oauth/authorize', authorizeQuery(challenge, { client_id: 'nobody' }));
    assert.equal(unknown.status, 400);
    assert.equal(unknown.headers.location, undefined);
    // Loopback redirect URIs match on any port (RFC 8252 §7.3), on every loopback name registered.
    assert.equal((await call('GET', '/oauth/authorize', authorizeQuery(challenge, { redirect_uri: 'http://localhost:5173/app/' }))).status, 200);
  });

  test('other errors go back to the redirect URI with the state', async () => {
    const { call } = await setup();
    const noPkce = await call('GET', '/oauth/authorize', authorizeQuery('', { code_challenge: '' }));
    assert.equal(noPkce.status, 303);
    const loc = new URL(noPkce.headers.location ?? '');
    assert.equal(loc.searchParams.get('error'), 'invalid_request');
    assert.equal(loc.searchParams.get('state'), 'st-1');
    const plain = await call('GET', '/oauth/authorize', authorizeQuery(pkce().challenge, { code_challenge_method: 'plain' }));
    assert.equal(new URL(plain.headers.location ?? '').searchParams.get('error'), 'invalid_request');
    const token = await call('GET', '/oauth/authorize', authorizeQuery(pkce().challenge, { response_type: 'token' }));
    assert.equal(new URL(token.headers.location ?? '').searchParams.get('error'), 'unsupported_response_type');
    const nobody = await call('POST', '/oauth/authorize', {}, Object.assign(authorizeQuery(pkce().challenge), { user_id: 'zed' }));
    assert.equal(nobody.status, 400);
    assert.match(nobody.body, /unknown user/);
  });
});
