/**
 * The standalone development IdP (`src/idp/main.ts`) as a client sees it: real processes on random
 * loopback ports, real HTTP, real JWTs verified with jose against the published JWKS.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';
import { request, type Res } from './helpers/http.ts';
import { startTestIdp, type TestIdp } from './helpers/processes.ts';

const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ID_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:id_token';
const RESOURCE = 'urn:chat:api';
const DIRECTORY_KEY = 'dev-directory-key';
const SECRETS: Record<string, string> = {
  'acme-support-backend': 'acme-support-backend-secret',
  'acme-support-reader': 'acme-support-reader-secret',
  'acme-support-web': 'acme-support-web-secret',
};
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const basic = (id: string, secret: string) => ({ Authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` });

function post(url: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Res> {
  return request(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}

function assertOAuthError(res: Res, status: number, error: string): void {
  assert.equal(res.status, status, res.text);
  const body = res.json() as Record<string, unknown>;
  assert.equal(body.error, error, res.text);
  assert.equal(typeof body.error_description, 'string');
  assert.equal(res.headers['cache-control'], 'no-store');
}

describe('standalone IdP', () => {
  let idp: TestIdp;
  let base: string;

  before(async () => {
    idp = await startTestIdp();
    base = idp.url;
  });
  after(async () => {
    await idp.stop();
  });

  const jwks = async (): Promise<JSONWebKeySet> => (await request(`${base}/jwks.json`)).json() as JSONWebKeySet;
  const verifyAccess = async (token: string): Promise<JWTPayload> =>
    (await jwtVerify(token, createLocalJWKSet(await jwks()), { issuer: base, audience: 'chat-api', typ: 'at+jwt', algorithms: ['ES256'] })).payload;
  const machine = (clientId: string, fields: Record<string, string> = {}) =>
    post(`${base}/oauth/token`, { grant_type: 'client_credentials', ...fields }, basic(clientId, SECRETS[clientId] ?? ''));
  const login = async (userId: string, clientId: string): Promise<string> => {
    const res = await post(`${base}/dev/login`, { user_id: userId, client_id: clientId });
    assert.equal(res.status, 200, res.text);
    return (res.json() as { id_token: string }).id_token;
  };
  /** Token exchange by `clientId`, authenticated with its secret when it has one. */
  const exchange = (clientId: string, subject: string, fields: Record<string, string> = {}) => {
    const secret = SECRETS[clientId];
    const auth = secret === undefined ? {} : basic(clientId, secret);
    const body = { grant_type: EXCHANGE, subject_token: subject, subject_token_type: ID_TOKEN_TYPE, resource: RESOURCE, ...fields };
    return post(`${base}/oauth/token`, secret === undefined ? { client_id: clientId, ...body } : body, auth);
  };
  const directory = (path: string, key: string | null = DIRECTORY_KEY) =>
    request(`${base}/directory${path}`, { headers: key === null ? {} : { Authorization: `Bearer ${key}` } });

  test('discovery names the endpoints, the directory and the resource identifier', async () => {
    const res = await request(`${base}/.well-known/openid-configuration`);
    assert.equal(res.status, 200);
    const doc = res.json() as Record<string, unknown>;
    assert.equal(doc.issuer, base);
    assert.equal(doc.jwks_uri, `${base}/jwks.json`);
    assert.equal(doc.token_endpoint, `${base}/oauth/token`);
    assert.equal(doc.revocation_endpoint, `${base}/oauth/revoke`);
    assert.equal(doc.chat_directory_endpoint, `${base}/directory`);
    assert.equal(doc.chat_resource_identifier, RESOURCE);
    assert.deepEqual(doc.grant_types_supported, ['client_credentials', EXCHANGE, 'authorization_code']);
    assert.equal(doc.authorization_endpoint, `${base}/oauth/authorize`);
    assert.deepEqual(doc.id_token_signing_alg_values_supported, ['ES256']);
    assert.ok((doc.token_endpoint_auth_methods_supported as string[]).includes('client_secret_basic'));
  });

  test('the JWKS publishes one public ES256 key', async () => {
    const { keys } = await jwks();
    assert.equal(keys.length, 1);
    const [key] = keys;
    assert.equal(key?.kty, 'EC');
    assert.equal(key?.crv, 'P-256');
    assert.equal(key?.alg, 'ES256');
    assert.equal(typeof key?.kid, 'string');
    assert.equal(key?.d, undefined, 'no private part');
  });

  describe('client_credentials', () => {
    test('a machine client gets a bound token with its scopes (HTTP Basic)', async () => {
      const res = await machine('acme-support-backend');
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers['cache-control'], 'no-store');
      const body = res.json() as Record<string, unknown>;
      assert.equal(body.token_type, 'Bearer');
      assert.equal(body.expires_in, 3600);
      assert.equal(body.scope, 'chat:sync');
      const token = body.access_token as string;
      const header = decodeProtectedHeader(token);
      assert.equal(header.typ, 'at+jwt');
      assert.equal(header.kid, (await jwks()).keys[0]?.kid);
      const claims = await verifyAccess(token);
      assert.equal(claims.sub, 'acme-support-backend');
      assert.equal(claims.client_id, 'acme-support-backend');
      assert.equal(claims.scope, 'chat:sync');
      assert.equal(claims.principal_type, 'machine');
      assert.equal(claims.tenant_id, 'acme');
      assert.equal(claims.application_id, 'support');
      assert.match(String(claims.jti), UUID);
      assert.equal(Number(claims.exp) - Number(claims.iat), 3600);
    });

    test('client_secret_post and a narrower scope', async () => {
      const res = await post(`${base}/oauth/token`, {
        grant_type: 'client_credentials',
        client_id: 'acme-support-reader',
        client_secret: 'acme-support-reader-secret',
        scope: 'chat:messages.read',
        resource: RESOURCE,
      });
      assert.equal(res.status, 200, res.text);
      const claims = await verifyAccess((res.json() as { access_token: string }).access_token);
      assert.equal(claims.scope, 'chat:messages.read');
      assert.equal(Number(claims.exp) - Number(claims.iat), 900);
    });

    test('a wrong secret or an unknown client is invalid_client (401, Basic challenge)', async () => {
      for (const res of [
        await post(`${base}/oauth/token`, { grant_type: 'client_credentials' }, basic('acme-support-backend', 'wrong')),
        await post(`${base}/oauth/token`, { grant_type: 'client_credentials', client_id: 'nobody', client_secret: 'x' }),
        await post(`${base}/oauth/token`, { grant_type: 'client_credentials' }),
        await post(`${base}/oauth/token`, { grant_type: 'client_credentials' }, { Authorization: 'Basic %%%' }),
      ]) {
        assertOAuthError(res, 401, 'invalid_client');
        assert.match(String(res.headers['www-authenticate']), /^Basic /);
      }
    });

    test('a scope the client does not hold is invalid_scope', async () => {
      assertOAuthError(await machine('acme-support-reader', { scope: 'chat:sync' }), 400, 'invalid_scope');
      assertOAuthError(await machine('acme-support-reader', { scope: 'chat:messages.read chat:members.write' }), 400, 'invalid_scope');
    });

    test('grant and client errors', async () => {
      assertOAuthError(await machine('acme-support-backend', { resource: 'urn:other' }), 400, 'invalid_target');
      assertOAuthError(await post(`${base}/oauth/token`, {}, basic('acme-support-backend', SECRETS['acme-support-backend'] ?? '')), 400, 'invalid_request');
      assertOAuthError(await machine('acme-support-backend', { grant_type: 'password' }), 400, 'unsupported_grant_type');
      assertOAuthError(await machine('acme-support-web'), 400, 'unauthorized_client');
      const both = await post(
        `${base}/oauth/token`,
        { grant_type: 'client_credentials', client_secret: 'acme-support-backend-secret' },
        basic('acme-support-backend', 'acme-support-backend-secret'),
      );
      assertOAuthError(both, 400, 'invalid_request');
    });
  });

  describe('token exchange', () => {
    test('dev login, then exchange by a confidential application client: a bound 10-minute user token', async () => {
      const subject = await login('bob', 'acme-support-web');
      const res = await exchange('acme-support-web', subject, { scope: 'chat:access' });
      assert.equal(res.status, 200, res.text);
      const body = res.json() as Record<string, unknown>;
      assert.equal(body.issued_token_type, 'urn:ietf:params:oauth:token-type:access_token');
      assert.equal(body.token_type, 'Bearer');
      assert.equal(body.scope, 'chat:access');
      assert.ok(Number(body.expires_in) <= 600 && Number(body.expires_in) > 0);
      const claims = await verifyAccess(body.access_token as string);
      assert.equal(claims.sub, 'bob');
      assert.equal(claims.client_id, 'acme-support-web');
      assert.equal(claims.principal_type, 'user');
      assert.equal(claims.scope, 'chat:access');
      assert.equal(claims.tenant_id, 'acme');
      assert.equal(claims.application_id, 'support');
      assert.match(String(claims.jti), UUID);
      assert.ok(Number(claims.exp) - Number(claims.iat) <= 600);
    });

    test('a public application client identifies itself with client_id', async () => {
      const res = await exchange('acme-internal-web', await login('grace', 'acme-internal-web'));
      assert.equal(res.status, 200, res.text);
      const claims = await verifyAccess((res.json() as { access_token: string }).access_token);
      assert.equal(claims.sub, 'grace');
      assert.equal(claims.application_id, 'internal');
      const withSecret = await exchange('acme-internal-web', await login('grace', 'acme-internal-web'), { client_secret: 'guess-a-secret' });
      assertOAuthError(withSecret, 401, 'invalid_client');
    });

    test('the service client gets an unbound user token', async () => {
      const res = await exchange('chat-web', await login('alice', 'chat-web'));
      assert.equal(res.status, 200, res.text);
      const claims = await verifyAccess((res.json() as { access_token: string }).access_token);
      assert.equal(claims.sub, 'alice');
      assert.equal(claims.client_id, 'chat-web');
      assert.equal(claims.tenant_id, undefined);
      assert.equal(claims.application_id, undefined);
    });

    test('the resource must be the chat service (invalid_target)', async () => {
      const subject = await login('bob', 'acme-support-web');
      assertOAuthError(await exchange('acme-support-web', subject, { resource: 'urn:somewhere-else' }), 400, 'invalid_target');
      assertOAuthError(await exchange('acme-support-web', subject, { resource: '' }), 400, 'invalid_target');
      assertOAuthError(await exchange('acme-support-web', subject, { audience: 'other-api' }), 400, 'invalid_target');
    });

    test('the only scope is chat:access (invalid_scope)', async () => {
      const subject = await login('bob', 'acme-support-web');
      assertOAuthError(await exchange('acme-support-web', subject, { scope: 'chat:sync' }), 400, 'invalid_scope');
      assertOAuthError(await exchange('acme-support-web', subject, { scope: 'chat:access chat:sync' }), 400, 'invalid_scope');
    });

    test('a bad subject token is invalid_grant', async () => {
      assertOAuthError(await exchange('acme-support-web', 'garbage'), 400, 'invalid_grant');
      // Issued to another client: an app cannot spend a token meant for someone else.
      assertOAuthError(await exchange('acme-support-web', await login('bob', 'acme-internal-web')), 400, 'invalid_grant');
      // An access token is not a sign-in.
      const access = ((await machine('acme-support-backend')).json() as { access_token: string }).access_token;
      assertOAuthError(await exchange('acme-support-web', access), 400, 'invalid_grant');
      // A token signed by a stranger.
      const [h, p] = (await login('bob', 'acme-support-web')).split('.');
      assertOAuthError(await exchange('acme-support-web', `${h}.${p}.${Buffer.alloc(64).toString('base64url')}`), 400, 'invalid_grant');
    });

    test('request errors are invalid_request', async () => {
      const subject = await login('bob', 'acme-support-web');
      assertOAuthError(await exchange('acme-support-web', subject, { subject_token_type: 'urn:x' }), 400, 'invalid_request');
      assertOAuthError(await exchange('acme-support-web', ''), 400, 'invalid_request');
      assertOAuthError(await exchange('acme-support-web', subject, { actor_token: subject }), 400, 'invalid_request');
      assertOAuthError(await exchange('acme-support-backend', subject), 400, 'unauthorized_client');
    });

    test('a user without chat access is refused with chat_access_not_granted (403)', async () => {
      const cases: [string, string][] = [
        ['frank', 'acme-internal-web'], // ASSIGNED_USERS, no assignment
        ['dave', 'acme-support-web'], // SUSPENDED member
        ['mallory', 'acme-support-web'], // no member at all
        ['oscar', 'acme-support-web'], // DISABLED user
        ['oscar', 'chat-web'],
        ['alice', 'acme-legacy-web'], // chat switched off for the application
        ['alice', 'umbrella-lab-web'], // chat switched off for the tenant
        ['alice', 'initech-desk-web'], // SUSPENDED tenant
      ];
      for (const [user, client] of cases) {
        const res = await exchange(client, await login(user, client));
        assertOAuthError(res, 403, 'chat_access_not_granted');
      }
    });

    test('dev login refuses unknown users and clients', async () => {
      assertOAuthError(await post(`${base}/dev/login`, { user_id: 'nobody', client_id: 'acme-support-web' }), 400, 'invalid_request');
      assertOAuthError(await post(`${base}/dev/login`, { user_id: 'bob', client_id: 'nobody' }), 401, 'invalid_client');
      assertOAuthError(await post(`${base}/dev/login`, { user_id: 'bob', client_id: 'acme-support-backend' }), 401, 'invalid_client');
      assertOAuthError(await post(`${base}/dev/login`, { client_id: 'acme-support-web' }), 400, 'invalid_request');
      const json = await request(`${base}/dev/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ user_id: 'bob', client_id: 'acme-support-web' }),
      });
      assert.equal(json.status, 200, json.text);
      const { id_token, expires_in } = json.json() as { id_token: string; expires_in: number };
      assert.equal(expires_in, 3600);
      assert.equal(decodeProtectedHeader(id_token).typ, 'JWT');
    });
  });

  describe('revocation', () => {
    test('a revoked token is listed by the directory until it expires, after the cursor', async () => {
      const before = (await directory('/revocations')).json() as { items: unknown[]; cursor: string };
      const token = ((await machine('acme-support-backend')).json() as { access_token: string }).access_token;
      const claims = await verifyAccess(token);
      const res = await post(`${base}/oauth/revoke`, { token, token_type_hint: 'access_token' }, basic('acme-support-backend', 'acme-support-backend-secret'));
      assert.equal(res.status, 200, res.text);
      const page = (await directory(`/revocations?after=${encodeURIComponent(before.cursor)}`)).json() as { items: unknown[]; cursor: string };
      assert.deepEqual(page.items, [{ jti: claims.jti, exp: claims.exp }]);
      assert.notEqual(page.cursor, before.cursor);
      const next = (await directory(`/revocations?after=${encodeURIComponent(page.cursor)}`)).json() as { items: unknown[] };
      assert.deepEqual(next.items, []);
      // Revoking again changes nothing.
      await post(`${base}/oauth/revoke`, { token }, basic('acme-support-backend', 'acme-support-backend-secret'));
      const again = (await directory(`/revocations?after=${encodeURIComponent(page.cursor)}`)).json() as { items: unknown[] };
      assert.deepEqual(again.items, []);
    });

    test("another client's token, garbage and expired tokens answer 200 and revoke nothing", async () => {
      const start = ((await directory('/revocations')).json() as { cursor: string }).cursor;
      const token = ((await machine('acme-support-backend')).json() as { access_token: string }).access_token;
      const other = basic('acme-support-reader', 'acme-support-reader-secret');
      assert.equal((await post(`${base}/oauth/revoke`, { token }, other)).status, 200);
      assert.equal((await post(`${base}/oauth/revoke`, { token: 'garbage' }, other)).status, 200);
      const page = (await directory(`/revocations?after=${encodeURIComponent(start)}`)).json() as { items: unknown[] };
      assert.deepEqual(page.items, []);
    });

    test('revocation needs client authentication and a token', async () => {
      assertOAuthError(await post(`${base}/oauth/revoke`, { token: 'x' }, basic('acme-support-backend', 'nope')), 401, 'invalid_client');
      assertOAuthError(await post(`${base}/oauth/revoke`, {}, basic('acme-support-backend', 'acme-support-backend-secret')), 400, 'invalid_request');
    });

    test('a revoked sign-in can no longer be exchanged', async () => {
      const subject = await login('bob', 'acme-support-web');
      assert.equal((await post(`${base}/oauth/revoke`, { token: subject }, basic('acme-support-web', 'acme-support-web-secret'))).status, 200);
      assertOAuthError(await exchange('acme-support-web', subject), 400, 'invalid_grant');
    });
  });

  test('key rotation: old tokens keep verifying, new tokens use the new kid', async () => {
    const old = ((await machine('acme-support-backend')).json() as { access_token: string }).access_token;
    const oldKid = decodeProtectedHeader(old).kid;
    const rotated = await request(`${base}/dev/rotate-keys`, { method: 'POST' });
    assert.equal(rotated.status, 200, rotated.text);
    const { kid } = rotated.json() as { kid: string };
    assert.notEqual(kid, oldKid);
    const kids = (await jwks()).keys.map((k) => k.kid);
    assert.ok(kids.includes(kid) && kids.includes(oldKid), `both keys published: ${kids.join()}`);
    assert.equal((await verifyAccess(old)).sub, 'acme-support-backend');
    const fresh = ((await machine('acme-support-backend')).json() as { access_token: string }).access_token;
    assert.equal(decodeProtectedHeader(fresh).kid, kid);
    assert.equal((await verifyAccess(fresh)).sub, 'acme-support-backend');
  });

  describe('directory', () => {
    test('needs the directory key (401 JSON otherwise)', async () => {
      for (const key of [null, 'wrong-key']) {
        const res = await directory('/capabilities', key);
        assertOAuthError(res, 401, 'invalid_token');
        assert.match(String(res.headers['www-authenticate']), /^Bearer /);
      }
      const ok = await directory('/capabilities');
      assert.equal(ok.status, 200);
      assert.ok(((ok.json() as { items: unknown[] }).items).length > 0);
    });

    test('answers a context in one round trip', async () => {
      const res = await directory('/context?tenant_id=acme&application_id=internal&user_id=frank');
      assert.equal(res.status, 200, res.text);
      const answer = res.json() as { tenant: { tenant_id: string }; application: { client_id: string }; member: { application: { has_access: boolean } } };
      assert.equal(answer.tenant.tenant_id, 'acme');
      assert.equal(answer.application.client_id, 'acme-internal-web');
      assert.equal(answer.member.application.has_access, false);
      assertOAuthError(await directory('/context'), 400, 'invalid_request');
      assertOAuthError(await directory('/context?tenant_id=acme&tenant_id=globex'), 400, 'invalid_request');
    });

    test('unknown tenants, users and applications are 404 *_not_found', async () => {
      assertOAuthError(await directory('/tenants/nope/applications'), 404, 'tenant_not_found');
      assertOAuthError(await directory('/tenants/nope/roles'), 404, 'tenant_not_found');
      assertOAuthError(await directory('/tenants/acme/roles?application_id=nope'), 404, 'application_not_found');
      assertOAuthError(await directory('/tenants/nope/profiles?user_ids=bob'), 404, 'tenant_not_found');
      assertOAuthError(await directory('/users/nobody/tenants'), 404, 'user_not_found');
      const context = await directory('/context?tenant_id=nope');
      assert.deepEqual(context.json(), { tenant: null, application: null, member: null });
    });

    test('path segments are percent-decoded; broken encoding is invalid_request', async () => {
      assert.equal((await directory('/users/%61lice/tenants')).status, 200);
      assertOAuthError(await directory('/users/%E0%A4%A/tenants'), 400, 'invalid_request');
    });
  });

  describe('bad input never crashes the IdP', () => {
    test('unknown paths are 404 and wrong methods 405 (with Allow)', async () => {
      assertOAuthError(await request(`${base}/nope`), 404, 'not_found');
      assertOAuthError(await request(`${base}/directory/users//tenants`, { headers: { Authorization: `Bearer ${DIRECTORY_KEY}` } }), 404, 'not_found');
      const res = await request(`${base}/oauth/token`);
      assertOAuthError(res, 405, 'method_not_allowed');
      assert.equal(res.headers.allow, 'POST');
      assertOAuthError(await request(`${base}/jwks.json`, { method: 'DELETE' }), 405, 'method_not_allowed');
    });

    test('malformed bodies are invalid_request', async () => {
      const raw = (body: string, type: string) =>
        request(`${base}/oauth/token`, { method: 'POST', headers: { 'Content-Type': type, ...basic('acme-support-backend', 'acme-support-backend-secret') }, body });
      assertOAuthError(await raw('{"grant_type":', 'application/json'), 400, 'invalid_request');
      assertOAuthError(await raw('[1,2]', 'application/json'), 400, 'invalid_request');
      assertOAuthError(await raw('{"grant_type":{"a":1}}', 'application/json'), 400, 'invalid_request');
      assertOAuthError(await raw('grant_type=client_credentials', 'text/plain'), 400, 'invalid_request');
      assertOAuthError(await raw('grant_type=a&grant_type=b', 'application/x-www-form-urlencoded'), 400, 'invalid_request');
      assertOAuthError(await raw('%zz=%%&&==', 'application/x-www-form-urlencoded'), 400, 'invalid_request');
      const ok = await raw('{"grant_type":"client_credentials"}', 'application/json; charset=utf-8');
      assert.equal(ok.status, 200, ok.text);
    });

    test('bodies over 64 kB are refused with 413', async () => {
      const res = await request(`${base}/oauth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        chunks: [Buffer.alloc(40 * 1024, 0x61), Buffer.alloc(40 * 1024, 0x61)],
      });
      assertOAuthError(res, 413, 'payload_too_large');
    });
  });

  test('browser apps registered on an application client may call the OAuth endpoints', async () => {
    const allowed = await post(`${base}/dev/login`, { user_id: 'bob', client_id: 'acme-support-web' }, { Origin: 'https://support.acme.test' });
    assert.equal(allowed.headers['access-control-allow-origin'], 'https://support.acme.test');
    const stranger = await post(`${base}/dev/login`, { user_id: 'bob', client_id: 'acme-support-web' }, { Origin: 'https://evil.test' });
    assert.equal(stranger.headers['access-control-allow-origin'], undefined);
    const preflight = await request(`${base}/oauth/token`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://internal.acme.test', 'Access-Control-Request-Method': 'POST' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers['access-control-allow-origin'], 'https://internal.acme.test');
    assert.match(String(preflight.headers['access-control-allow-headers']), /Authorization/);
    const dir = await request(`${base}/directory/capabilities`, { headers: { Origin: 'https://support.acme.test', Authorization: `Bearer ${DIRECTORY_KEY}` } });
    assert.equal(dir.headers['access-control-allow-origin'], undefined, 'the directory is for servers only');
  });
});

describe('standalone IdP with IDP_DEV_LOGIN=false', () => {
  let idp: TestIdp;
  before(async () => {
    idp = await startTestIdp({ IDP_DEV_LOGIN: 'false', IDP_ISSUER: 'https://idp.example.test/' });
  });
  after(async () => {
    await idp.stop();
  });

  test('the development endpoints do not exist', async () => {
    assertOAuthError(await post(`${idp.url}/dev/login`, { user_id: 'bob', client_id: 'acme-support-web' }), 404, 'not_found');
    assertOAuthError(await request(`${idp.url}/dev/rotate-keys`, { method: 'POST' }), 404, 'not_found');
    const doc = (await request(`${idp.url}/.well-known/openid-configuration`)).json() as Record<string, unknown>;
    assert.equal(doc.dev_login_endpoint, undefined);
    assert.equal(doc.issuer, 'https://idp.example.test', 'IDP_ISSUER, without its trailing slash');
    assert.equal(doc.token_endpoint, 'https://idp.example.test/oauth/token');
  });
});

describe('standalone IdP configuration', () => {
  test('refuses to start with one clear line per problem', async () => {
    await assert.rejects(startTestIdp({ IDP_PORT: 'eighty', IDP_DEV_LOGIN: 'maybe', IDP_ISSUER: 'ftp://x' }), (err: Error) => {
      assert.match(err.message, /IDP_PORT must be an integer from 0 to 65535 \(got "eighty"\)/);
      assert.match(err.message, /IDP_DEV_LOGIN must be true or false/);
      assert.match(err.message, /IDP_ISSUER must be an absolute http\(s\) URL/);
      return true;
    });
  });

  test('refuses a broken fixture, naming the file and the problem', async () => {
    await assert.rejects(startTestIdp({ IDP_FIXTURE: '/nonexistent/fixture.json' }), /invalid IdP fixture \/nonexistent\/fixture\.json:\n {2}- cannot read the file/);
  });
});
