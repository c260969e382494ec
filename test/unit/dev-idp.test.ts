/**
 * Development IdP behaviour that depends on time or on the fixture loader, with a controllable
 * clock and the framework-agnostic handler (no sockets needed).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { DEFAULT_FIXTURE } from '../../src/config/index.ts';
import { DevIdp } from '../../src/idp/dev-idp.ts';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { FixtureError, loadFixture, parseFixture, type Fixture, type FixtureSigningKey } from '../../src/idp/fixture.ts';
import { createIdpHandler } from '../../src/idp/http.ts';
import { generateSigningKey } from '../helpers/fixture.ts';

const demo = await loadFixture(DEFAULT_FIXTURE);

function setup(fixture: Fixture = demo) {
  let now = Date.UTC(2030, 0, 1);
  const listenerErrors: unknown[] = [];
  const idp = new DevIdp(fixture, { issuer: 'http://idp.test', devLogin: true, now: () => now, onListenerError: (e) => listenerErrors.push(e) });
  const handler = createIdpHandler(idp);
  const form = async (p: string, fields: Record<string, string>, authorization?: string) => {
    const res = await handler({
      method: 'POST',
      path: p,
      query: new URLSearchParams(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(authorization ? { authorization } : {}) },
      body: Buffer.from(new URLSearchParams(fields).toString()),
    });
    return { status: res.status, body: (res.body === '' ? {} : JSON.parse(res.body)) as Record<string, unknown> };
  };
  const machineToken = async () =>
    String((await form('/oauth/token', { grant_type: 'client_credentials', client_id: 'acme-support-backend', client_secret: 'acme-support-backend-secret' })).body.access_token);
  const idToken = async (user: string) => String((await form('/dev/login', { user_id: user, client_id: 'acme-internal-web' })).body.id_token);
  const exchange = (subject: string) =>
    form('/oauth/token', {
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      client_id: 'acme-internal-web',
      subject_token: subject,
      subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
      resource: 'urn:chat:api',
    });
  const revokeAsBackend = (token: string) =>
    form('/oauth/revoke', { token }, `Basic ${Buffer.from('acme-support-backend:acme-support-backend-secret').toString('base64')}`);
  return { idp, handler, form, machineToken, idToken, exchange, revokeAsBackend, listenerErrors, advance: (s: number) => (now += s * 1000) };
}

describe('development IdP over time', () => {
  test('a retired key stays published for the longest token lifetime, then disappears', async () => {
    const { idp, advance } = setup();
    const first = idp.currentKid;
    const second = idp.rotateKeys();
    assert.deepEqual(idp.jwks().keys.map((k) => k.kid), [first, second]);
    advance(3599); // ID tokens live 3600 s, the longest in the demo fixture
    assert.equal(idp.jwks().keys.length, 2);
    advance(2);
    assert.deepEqual(idp.jwks().keys.map((k) => k.kid), [second]);
  });

  test('revocation entries are dropped once the token has expired', async () => {
    const t = setup();
    const token = await t.machineToken();
    assert.equal((await t.revokeAsBackend(token)).status, 200);
    assert.equal(t.idp.revocations(null).items.length, 1);
    t.advance(3601);
    assert.deepEqual(t.idp.revocations(null).items, []);
  });

  test('a user token never outlives the sign-in it was exchanged from', async () => {
    const t = setup();
    const subject = await t.idToken('grace');
    t.advance(3500);
    const res = await t.exchange(subject);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.expires_in, 100);
    t.advance(101);
    const expired = await t.exchange(subject);
    assert.equal(expired.status, 400);
    assert.equal(expired.body.error, 'invalid_grant');
  });

  test('a throwing revocation listener harms neither the revocation nor other listeners', async () => {
    const t = setup();
    const seen: string[] = [];
    t.idp.onRevocation(() => {
      throw new Error('listener bug');
    });
    const off = t.idp.onRevocation((e) => seen.push(e.jti));
    assert.equal((await t.revokeAsBackend(await t.machineToken())).status, 200);
    assert.equal(seen.length, 1);
    assert.equal(t.listenerErrors.length, 1);
    off();
    await t.revokeAsBackend(await t.machineToken());
    assert.equal(seen.length, 1);
  });

  test('setIssuer changes iss and every discovery URL', () => {
    const { idp } = setup();
    idp.setIssuer('http://127.0.0.1:4321/');
    assert.equal(idp.issuer(), 'http://127.0.0.1:4321');
    assert.equal(idp.discovery().jwks_uri, 'http://127.0.0.1:4321/jwks.json');
    assert.throws(() => idp.setIssuer('not a url'), /issuer must be an absolute http\(s\) URL/);
  });

  test('an unexpected error is a 500 server_error, reported to onError', async () => {
    const errors: unknown[] = [];
    const idp = new DevIdp(demo, { issuer: 'http://idp.test', devLogin: true });
    idp.capabilityCatalog = () => {
      throw new Error('boom');
    };
    const handler = createIdpHandler(idp, { onError: (e) => errors.push(e) });
    const res = await handler({
      method: 'GET',
      path: '/directory/capabilities',
      query: new URLSearchParams(),
      headers: { authorization: 'Bearer dev-directory-key' },
      body: Buffer.alloc(0),
    });
    assert.equal(res.status, 500);
    assert.deepEqual(JSON.parse(res.body), { error: 'server_error', error_description: 'unexpected error in the identity provider' });
    assert.equal(errors.length, 1);
  });
});

describe('fixture loader', () => {
  const clone = (): Record<string, unknown> => JSON.parse(JSON.stringify(demo)) as Record<string, unknown>;

  test('applies defaults: resource identifier and machine token lifetime', () => {
    const raw = clone() as { resource_identifier?: string; clients: { token_ttl_seconds?: number }[] };
    delete raw.resource_identifier;
    delete raw.clients[0]?.token_ttl_seconds;
    const f = parseFixture(raw);
    assert.equal(f.resource_identifier, 'urn:chat:api');
    const first = f.clients[0];
    assert.equal(first?.kind === 'machine' ? first.token_ttl_seconds : null, 3600);
  });

  test('reports every shape problem at once, with its location', () => {
    const raw = clone() as Record<string, unknown> & { users: Record<string, unknown>[]; clients: Record<string, unknown>[] };
    raw.extra = true;
    raw.users[0] = { ...raw.users[0], display_name: 3, status: 'GONE' };
    raw.clients.push({ kind: 'robot', client_id: 'r' });
    raw.clients.push({ kind: 'machine', client_id: 'm' });
    assert.throws(
      () => parseFixture(raw, 'broken.json'),
      (err: FixtureError) => {
        assert.ok(err instanceof FixtureError);
        assert.match(err.message, /^invalid IdP fixture broken\.json:/);
        assert.ok(err.problems.includes('(root) has unknown property "extra"'), err.message);
        assert.ok(err.problems.includes('/users/0/display_name must be string or null'), err.message);
        assert.ok(err.problems.includes('/users/0/status must be one of ACTIVE, DISABLED'), err.message);
        assert.ok(err.problems.some((p) => p.startsWith('/clients/4/kind must be one of machine, service')), err.message);
        assert.ok(err.problems.includes("/clients/5 must have required property 'tenant_id'"), err.message);
        return true;
      },
    );
  });

  test('reports every reference problem at once', () => {
    const raw = clone() as unknown as Fixture;
    const acme = raw.tenants[0];
    assert.ok(acme);
    acme.members.push({ user_id: 'zed', status: 'ACTIVE', tenant_roles: ['emperor'], applications: { nope: { roles: [] }, support: { roles: ['tenant_owner'] } } });
    acme.members.push({ ...acme.members[0]! });
    acme.roles.push({ ...acme.roles[0]!, role_id: 'acme-extra', capabilities: ['teleport'] });
    acme.applications[0]!.default_roles = ['ghost'];
    raw.clients.push({ client_id: 'acme-support-web', client_secret: null, kind: 'service' });
    raw.clients.push({ client_id: 'x-backend', client_secret: 'long-enough', kind: 'machine', tenant_id: 'acme', application_id: 'nope', scopes: ['chat:fly'], token_ttl_seconds: 60 });
    raw.users.push({ ...raw.users[0]! });
    assert.throws(
      () => parseFixture(raw),
      (err: FixtureError) => {
        const expected = [
          '/users/9: duplicate user_id "alice"',
          '/tenants/0/roles/7: capability "teleport" is not in the catalog',
          '/tenants/0/roles/7: duplicate tenant role name "tenant_owner"',
          '/tenants/0/applications/0: unknown default role "ghost" for application "support"',
          '/tenants/0/members/7: unknown user_id "zed"',
          '/tenants/0/members/7: unknown tenant role "emperor"',
          '/tenants/0/members/7: unknown application_id "nope"',
          '/tenants/0/members/7: unknown role "tenant_owner" for application "support"',
          '/tenants/0/members/8: duplicate member user_id "alice"',
          '/clients/4: duplicate client_id "acme-support-web"',
          '/clients/5: unknown application_id "nope" in tenant "acme"',
        ];
        for (const line of expected) assert.ok(err.problems.includes(line), `missing "${line}" in\n${err.message}`);
        assert.ok(err.problems.some((p) => p.startsWith('/clients/5: unknown scope "chat:fly"')), err.message);
        return true;
      },
    );
  });

  test('unreadable files and invalid JSON are reported with the path', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'idp-fixture-'));
    try {
      const file = path.join(dir, 'f.json');
      await writeFile(file, '{"users": [');
      await assert.rejects(loadFixture(file), new RegExp(`invalid IdP fixture ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:\\n {2}- not valid JSON`));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('configured signing keys (fixture signing_keys)', () => {
  const withKeys = (keys: FixtureSigningKey[]): Fixture => parseFixture({ ...JSON.parse(JSON.stringify(demo)), signing_keys: keys });
  const verifyWith = async (idp: DevIdp, token: string) =>
    (await jwtVerify(token, createLocalJWKSet(idp.jwks() as JSONWebKeySet), { issuer: 'http://idp.test', currentDate: new Date(Date.UTC(2030, 0, 1)) })).protectedHeader;

  test('the first key signs, every key is published; a second IdP on the same fixture signs alike', async () => {
    const [a, b] = [generateSigningKey('key-a'), generateSigningKey('key-b')];
    const fixture = withKeys([a, b]);
    const t = setup(fixture);
    assert.equal(t.idp.currentKid, 'key-a');
    assert.deepEqual(t.idp.jwks().keys.map((k) => k.kid), ['key-a', 'key-b']);
    for (const k of t.idp.jwks().keys) assert.equal(k.d, undefined, 'the JWKS never carries the private part');
    const token = await t.machineToken();
    assert.equal((await verifyWith(t.idp, token)).kid, 'key-a');
    // "Restarted": another IdP on the same fixture verifies the first one's token with its own JWKS.
    const again = setup(fixture);
    assert.equal((await verifyWith(again.idp, token)).kid, 'key-a');
  });

  test('rotation retires the configured signer after the retention period, other configured keys stay', () => {
    const t = setup(withKeys([generateSigningKey('key-a'), generateSigningKey('key-b')]));
    const next = t.idp.rotateKeys();
    assert.deepEqual(t.idp.jwks().keys.map((k) => k.kid), ['key-a', 'key-b', next]);
    t.advance(3601);
    assert.deepEqual(t.idp.jwks().keys.map((k) => k.kid), ['key-b', next]);
  });

  test('the loader refuses broken keys with one line per problem', () => {
    const a = generateSigningKey('k1');
    const b = generateSigningKey('k2');
    const raw = { ...JSON.parse(JSON.stringify(demo)), signing_keys: [a, { ...a }, { ...b, d: a.d }, { ...b, kid: 'k3', x: a.x }] };
    assert.throws(
      () => parseFixture(raw, 'keys.json'),
      (err: FixtureError) => {
        const expected = ['/signing_keys/1: duplicate signing key kid "k1"', '/signing_keys/2: x and y are not the public key of d'];
        for (const line of expected) assert.ok(err.problems.includes(line), `missing "${line}" in\n${err.message}`);
        assert.ok(err.problems.some((p) => p.startsWith('/signing_keys/3: not a valid P-256 private key')), err.message);
        assert.ok(!err.message.includes(a.d), 'the private key never appears in the message');
        return true;
      },
    );
    const shapes = { ...JSON.parse(JSON.stringify(demo)), signing_keys: [{ ...a, crv: 'P-384' }, { kty: 'EC', crv: 'P-256', x: a.x, y: a.y, kid: 'pub' }, { ...a, kid: 'k9', k: 'x' }] };
    assert.throws(
      () => parseFixture(shapes, 'keys.json'),
      (err: FixtureError) => {
        for (const line of ['/signing_keys/0/crv must be "P-256"', "/signing_keys/1 must have required property 'd'", '/signing_keys/2 has unknown property "k"']) {
          assert.ok(err.problems.includes(line), `missing "${line}" in\n${err.message}`);
        }
        return true;
      },
    );
    assert.throws(() => parseFixture({ ...JSON.parse(JSON.stringify(demo)), signing_keys: [] }), /signing_keys must NOT have fewer than 1 items/);
  });
});
