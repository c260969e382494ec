/**
 * One contract suite for the IdentityDirectory port, run against every driver: `embedded` (the
 * development IdP in this process) and `http` (the standalone IdP as its own process, over real
 * HTTP). Then the failure modes only the HTTP driver has: IdP down, IdP hanging, IdP answering
 * garbage.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_FIXTURE } from '../src/config/index.ts';
import { APPLICATION_CAPABILITIES, ENFORCED_CAPABILITIES, TENANT_CAPABILITIES } from '../src/identity/catalog.ts';
import { EmbeddedIdentityDirectory } from '../src/identity/embedded-identity-directory.ts';
import { HttpIdentityDirectory } from '../src/identity/http-identity-directory.ts';
import { IdentityUnavailableError, type IdentityDirectory, type RevocationEntry } from '../src/identity/types.ts';
import { DevIdp } from '../src/idp/dev-idp.ts';
import { loadFixture } from '../src/idp/fixture.ts';
import { createIdpHandler } from '../src/idp/http.ts';
import { startTestIdp, type TestIdp } from './helpers/processes.ts';

const BACKEND = { id: 'acme-support-backend', secret: 'acme-support-backend-secret' };
const basic = `Basic ${Buffer.from(`${BACKEND.id}:${BACKEND.secret}`).toString('base64')}`;
const DIRECTORY_KEY = 'dev-directory-key';

interface Harness {
  directory: IdentityDirectory;
  expectedIssuer: string;
  /** POSTs a form to an IdP endpoint as the acme-support-backend client. */
  post(path: string, fields: Record<string, string>): Promise<{ status: number; body: string }>;
  stop(): Promise<void>;
}

const drivers: Record<'embedded' | 'http', () => Promise<Harness>> = {
  async embedded() {
    const idp = new DevIdp(await loadFixture(DEFAULT_FIXTURE), { issuer: 'http://embedded.test/idp', devLogin: true });
    const handler = createIdpHandler(idp);
    const directory = new EmbeddedIdentityDirectory(idp);
    return {
      directory,
      expectedIssuer: 'http://embedded.test/idp',
      async post(path, fields) {
        const res = await handler({
          method: 'POST',
          path,
          query: new URLSearchParams(),
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
          body: Buffer.from(new URLSearchParams(fields).toString()),
        });
        return { status: res.status, body: res.body };
      },
      stop: () => directory.close(),
    };
  },
  async http() {
    const proc = await startTestIdp();
    const directory = new HttpIdentityDirectory({ url: proc.url, directoryKey: DIRECTORY_KEY, timeoutMs: 2000 });
    await directory.init();
    return {
      directory,
      expectedIssuer: proc.url,
      async post(path, fields) {
        const res = await fetch(`${proc.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
          body: new URLSearchParams(fields),
        });
        return { status: res.status, body: await res.text() };
      },
      async stop() {
        await directory.close();
        await proc.stop();
      },
    };
  },
};

const sorted = (xs: readonly string[]) => [...xs].sort();
const MEMBER_CAPS = ['conversations.read', 'conversations.create', 'groups.create', 'messages.read', 'messages.send', 'messages.update'];

for (const [name, start] of Object.entries(drivers)) {
  describe(`IdentityDirectory contract: ${name} driver`, () => {
    let h: Harness;
    let d: IdentityDirectory;
    before(async () => {
      h = await start();
      d = h.directory;
    });
    after(async () => {
      await h.stop();
    });

    test('names its driver and the issuer, and publishes the keys', async () => {
      assert.equal(d.driver, name);
      assert.equal(d.issuer(), h.expectedIssuer);
      const { keys } = await d.jwks();
      assert.ok(keys.length >= 1);
      for (const k of keys) {
        assert.equal(k.kty, 'EC');
        assert.equal(typeof k.kid, 'string');
        assert.equal(k.d, undefined);
      }
    });

    describe('context', () => {
      test('the tenant owner holds every catalog key, tenant-wide and in the application', async () => {
        const a = await d.context({ tenant_id: 'acme', application_id: 'support', user_id: 'alice' });
        const catalog = (await d.capabilityCatalog()).map((c) => c.key);
        assert.deepEqual(sorted(catalog), sorted(ENFORCED_CAPABILITIES));
        assert.equal(a.tenant?.tenant_id, 'acme');
        assert.equal(a.member?.status, 'ACTIVE');
        assert.deepEqual(a.member?.tenant_roles, ['tenant_owner']);
        assert.deepEqual(sorted(a.member?.tenant_capabilities ?? []), sorted(catalog));
        assert.equal(a.member?.application?.has_access, true);
        assert.deepEqual(sorted(a.member?.application?.capabilities ?? []), sorted(catalog));
        assert.deepEqual(a.member?.profile, { user_id: 'alice', display_name: 'Alice Anders', avatar_url: 'https://avatars.example.test/alice.png' });
      });

      test('the application record carries the client and its origins', async () => {
        const a = await d.context({ tenant_id: 'acme', application_id: 'support' });
        assert.deepEqual(a.application, {
          application_id: 'support',
          tenant_id: 'acme',
          name: 'Support Desk',
          slug: 'support',
          logo_url: null,
          type: 'TENANT',
          access_mode: 'ALL_TENANT_MEMBERS',
          identity_status: 'ACTIVE',
          chat_enabled: true,
          synced_at: '2024-06-01T12:00:00Z',
          client_id: 'acme-support-web',
          allowed_origins: ['http://localhost:3000', 'https://support.acme.test'],
        });
        assert.equal(a.member, null, 'no user asked about');
      });

      test('a plain member gets the default application role', async () => {
        const a = await d.context({ tenant_id: 'acme', application_id: 'support', user_id: 'bob' });
        assert.deepEqual(a.member?.tenant_capabilities, []);
        assert.deepEqual(a.member?.application, { has_access: true, roles: ['tenant_member', 'app_member'], capabilities: MEMBER_CAPS });
      });

      test('an administrator holds administration.* tenant-wide and moderator rights where assigned', async () => {
        const a = await d.context({ tenant_id: 'acme', application_id: 'internal', user_id: 'carol' });
        assert.deepEqual(sorted(a.member?.tenant_capabilities ?? []), sorted(TENANT_CAPABILITIES));
        assert.ok(APPLICATION_CAPABILITIES.every((c) => a.member?.application?.capabilities.includes(c)));
      });

      test('ASSIGNED_USERS: only assigned members have access', async () => {
        const frank = await d.context({ tenant_id: 'acme', application_id: 'internal', user_id: 'frank' });
        assert.deepEqual(frank.member?.application, { has_access: false, roles: [], capabilities: [] });
        const grace = await d.context({ tenant_id: 'acme', application_id: 'internal', user_id: 'grace' });
        assert.equal(grace.member?.application?.has_access, true);
        assert.deepEqual(grace.member?.application?.capabilities, MEMBER_CAPS);
        const frankSupport = await d.context({ tenant_id: 'acme', application_id: 'support', user_id: 'frank' });
        assert.deepEqual(frankSupport.member?.application?.capabilities, ['conversations.read', 'messages.read']);
      });

      test('a suspended member keeps its status but holds nothing', async () => {
        const a = await d.context({ tenant_id: 'acme', application_id: 'support', user_id: 'dave' });
        assert.equal(a.member?.status, 'SUSPENDED');
        assert.deepEqual(a.member?.tenant_capabilities, []);
        assert.equal(a.member?.application?.has_access, false);
      });

      test('non-members, disabled users, unknown applications and tenants', async () => {
        assert.equal((await d.context({ tenant_id: 'acme', application_id: 'support', user_id: 'mallory' })).member, null);
        assert.equal((await d.context({ tenant_id: 'acme', application_id: 'support', user_id: 'oscar' })).member, null);
        assert.equal((await d.context({ tenant_id: 'acme', user_id: 'nobody' })).member, null);
        const unknownApp = await d.context({ tenant_id: 'acme', application_id: 'nope', user_id: 'bob' });
        assert.equal(unknownApp.application, null);
        assert.equal(unknownApp.member?.status, 'ACTIVE');
        assert.equal(unknownApp.member?.application, null);
        const plain = await d.context({ tenant_id: 'acme', user_id: 'bob' });
        assert.equal(plain.member?.application, null);
        assert.deepEqual(await d.context({ tenant_id: 'nope', application_id: 'support', user_id: 'bob' }), { tenant: null, application: null, member: null });
      });

      test('suspended and chat-disabled tenants and applications are reported as such', async () => {
        const initech = await d.context({ tenant_id: 'initech', application_id: 'desk', user_id: 'alice' });
        assert.equal(initech.tenant?.status, 'SUSPENDED');
        assert.equal(initech.member?.application?.has_access, false, 'nobody holds anything in a suspended tenant');
        const umbrella = await d.context({ tenant_id: 'umbrella', application_id: 'lab' });
        assert.equal(umbrella.tenant?.status, 'ACTIVE');
        assert.equal(umbrella.tenant?.chat_enabled, false);
        const legacy = await d.context({ tenant_id: 'acme', application_id: 'legacy' });
        assert.equal(legacy.application?.chat_enabled, false);
      });
    });

    test('userTenants: the tenants a user is an ACTIVE member of', async () => {
      assert.deepEqual(sorted((await d.userTenants('alice')).map((t) => t.tenant_id)), ['acme', 'globex', 'initech', 'umbrella']);
      assert.deepEqual(await d.userTenants('erin'), [
        { tenant_id: 'globex', name: 'Globex', slug: 'globex', logo_url: null, status: 'ACTIVE', chat_enabled: true },
      ]);
      assert.deepEqual(await d.userTenants('dave'), []);
      assert.deepEqual(await d.userTenants('oscar'), []);
      assert.deepEqual(await d.userTenants('mallory'), []);
      assert.deepEqual(await d.userTenants('nobody'), []);
    });

    test('applications of a tenant', async () => {
      const apps = await d.applications('acme');
      assert.deepEqual(apps.map((a) => [a.application_id, a.access_mode, a.chat_enabled, a.client_id]), [
        ['support', 'ALL_TENANT_MEMBERS', true, 'acme-support-web'],
        ['internal', 'ASSIGNED_USERS', true, 'acme-internal-web'],
        ['legacy', 'ALL_TENANT_MEMBERS', false, 'acme-legacy-web'],
      ]);
      assert.deepEqual(await d.applications('nope'), []);
    });

    test('roles: tenant roles, and the application roles that apply to an application', async () => {
      const tenant = await d.roles('acme', null);
      assert.deepEqual(tenant.map((r) => r.role), ['tenant_owner', 'tenant_admin', 'tenant_member']);
      const owner = tenant[0];
      assert.equal(owner?.locked, true);
      assert.equal(owner?.role_scope, 'tenant');
      assert.deepEqual(sorted(owner?.capabilities ?? []), sorted(ENFORCED_CAPABILITIES));
      assert.deepEqual(sorted(tenant[1]?.capabilities ?? []), sorted(TENANT_CAPABILITIES));
      const support = await d.roles('acme', 'support');
      assert.deepEqual(support.map((r) => r.role), ['app_member', 'app_moderator', 'app_viewer', 'support_agent']);
      assert.ok(support.every((r) => r.role_scope === 'application' && !r.locked));
      assert.equal(support[3]?.application_id, 'support');
      assert.equal(support[3]?.system, false);
      assert.deepEqual((await d.roles('acme', 'internal')).map((r) => r.role), ['app_member', 'app_moderator', 'app_viewer']);
      assert.deepEqual(await d.roles('acme', 'nope'), []);
      assert.deepEqual(await d.roles('nope', null), []);
    });

    test('the capability catalog', async () => {
      const catalog = await d.capabilityCatalog();
      for (const c of catalog) {
        assert.equal(c.scope, (TENANT_CAPABILITIES as readonly string[]).includes(c.key) ? 'tenant' : 'application', c.key);
        assert.ok(c.description.length > 0);
      }
    });

    test('profiles of tenant members, in the order asked; unknown ids left out', async () => {
      const profiles = await d.profiles('acme', ['frank', 'mallory', 'nobody', 'bob', 'frank', 'oscar']);
      assert.deepEqual(profiles, [
        { user_id: 'frank', display_name: null, avatar_url: null },
        { user_id: 'bob', display_name: 'Bob Baker', avatar_url: null },
      ]);
      assert.deepEqual(await d.profiles('acme', []), []);
      assert.deepEqual(await d.profiles('nope', ['bob']), []);
    });

    test('revocations: entries after the cursor, then nothing new', async () => {
      const start = await d.revocations(null);
      const jtis: string[] = [];
      for (let i = 0; i < 2; i++) {
        const issued = await h.post('/oauth/token', { grant_type: 'client_credentials' });
        assert.equal(issued.status, 200, issued.body);
        const token = (JSON.parse(issued.body) as { access_token: string }).access_token;
        jtis.push(String((JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as { jti: string }).jti));
        assert.equal((await h.post('/oauth/revoke', { token })).status, 200);
      }
      const page = await d.revocations(start.cursor);
      assert.deepEqual(page.items.map((e) => e.jti), jtis);
      assert.ok(page.items.every((e) => e.exp > Date.now() / 1000));
      assert.deepEqual((await d.revocations(page.cursor)).items, []);
      const all = (await d.revocations(null)).items.map((e) => e.jti);
      assert.ok(jtis.every((j) => all.includes(j)));
      // A cursor the IdP did not issue (another run, garbage) replays everything: safe, never a gap.
      const replay = (await d.revocations('not-a-cursor')).items.map((e) => e.jti);
      assert.ok(jtis.every((j) => replay.includes(j)));
    });
  });
}

describe('embedded driver specifics', () => {
  test('revocations are pushed synchronously; answers are copies', async () => {
    const idp = new DevIdp(await loadFixture(DEFAULT_FIXTURE), { issuer: 'http://embedded.test/idp', devLogin: true });
    const d = new EmbeddedIdentityDirectory(idp);
    const seen: RevocationEntry[] = [];
    d.onRevocation((e) => seen.push(e));
    const handler = createIdpHandler(idp);
    const form = (path: string, fields: Record<string, string>) =>
      handler({
        method: 'POST',
        path,
        query: new URLSearchParams(),
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
        body: Buffer.from(new URLSearchParams(fields).toString()),
      });
    const token = (JSON.parse((await form('/oauth/token', { grant_type: 'client_credentials' })).body) as { access_token: string }).access_token;
    await form('/oauth/revoke', { token });
    assert.equal(seen.length, 1, 'told before the revocation request even answered');

    const first = await d.context({ tenant_id: 'acme', application_id: 'support', user_id: 'bob' });
    first.member?.application?.capabilities.push('messages.delete');
    first.application?.allowed_origins.push('https://evil.test');
    const second = await d.context({ tenant_id: 'acme', application_id: 'support', user_id: 'bob' });
    assert.deepEqual(second.member?.application?.capabilities, MEMBER_CAPS);
    assert.deepEqual(second.application?.allowed_origins, ['http://localhost:3000', 'https://support.acme.test']);

    await d.close();
    await form('/oauth/revoke', { token: (JSON.parse((await form('/oauth/token', { grant_type: 'client_credentials' })).body) as { access_token: string }).access_token });
    assert.equal(seen.length, 1, 'no pushes after close');
  });
});

describe('http driver failure modes', () => {
  test('an IdP that is down: IdentityUnavailableError', async () => {
    const proc: TestIdp = await startTestIdp();
    const d = new HttpIdentityDirectory({ url: proc.url, directoryKey: DIRECTORY_KEY, timeoutMs: 2000 });
    await d.init();
    await proc.stop();
    await assert.rejects(d.context({ tenant_id: 'acme' }), IdentityUnavailableError);
    await assert.rejects(d.revocations(null), IdentityUnavailableError);
    const fresh = new HttpIdentityDirectory({ url: proc.url, directoryKey: DIRECTORY_KEY, timeoutMs: 2000 });
    await assert.rejects(fresh.init(), IdentityUnavailableError);
    assert.throws(() => fresh.issuer(), IdentityUnavailableError);
  });

  test('an IdP that never answers: IdentityUnavailableError after timeoutMs', async () => {
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((s) => sockets.add(s));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    try {
      const d = new HttpIdentityDirectory({ url: `http://127.0.0.1:${port}`, directoryKey: DIRECTORY_KEY, timeoutMs: 150 });
      await assert.rejects(d.init(), (err: Error) => err instanceof IdentityUnavailableError && /no answer within 150 ms/.test(err.message));
      await d.close();
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  describe('an IdP that answers garbage', () => {
    let server: http.Server;
    let url: string;
    const answers = new Map<string, [number, string]>();
    before(async () => {
      server = http.createServer((req, res) => {
        const path = (req.url ?? '').split('?')[0] ?? '';
        if (path === '/.well-known/openid-configuration') {
          res.writeHead(200, { 'content-type': 'application/json', connection: 'close' });
          res.end(JSON.stringify({ issuer: url, jwks_uri: `${url}/jwks.json`, chat_directory_endpoint: `${url}/dir` }));
          return;
        }
        const [status, body] = answers.get(path) ?? [404, '<html>not here</html>'];
        res.writeHead(status, { 'content-type': 'application/json', connection: 'close' });
        res.end(body);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    });
    after(async () => {
      await new Promise((resolve) => server.close(resolve));
    });

    test('wrong shapes, bad JSON, 5xx, 401 and foreign 404s are unavailability; *_not_found 404s are answers', async () => {
      const d = new HttpIdentityDirectory({ url, directoryKey: 'k', timeoutMs: 1000 });
      answers.set('/dir/context', [200, JSON.stringify({ tenant: { tenant_id: 1 }, application: null, member: null })]);
      await assert.rejects(d.context({ tenant_id: 'acme' }), /unexpected shape/);
      answers.set('/dir/context', [200, '{not json']);
      await assert.rejects(d.context({ tenant_id: 'acme' }), /not JSON/);
      answers.set('/dir/context', [503, '{}']);
      await assert.rejects(d.context({ tenant_id: 'acme' }), /answered 503/);
      answers.set('/dir/context', [401, '{"error":"invalid_token"}']);
      await assert.rejects(d.context({ tenant_id: 'acme' }), /directory key/);
      answers.delete('/dir/context');
      await assert.rejects(d.context({ tenant_id: 'acme' }), IdentityUnavailableError, 'an HTML 404 is a wrong URL, not "no such tenant"');
      answers.set('/dir/context', [404, '{"error":"tenant_not_found"}']);
      assert.deepEqual(await d.context({ tenant_id: 'acme' }), { tenant: null, application: null, member: null });
      answers.set('/dir/tenants/acme/applications', [404, '{"error":"tenant_not_found"}']);
      assert.deepEqual(await d.applications('acme'), []);
      answers.set('/dir/capabilities', [404, '{"error":"tenant_not_found"}']);
      await assert.rejects(d.capabilityCatalog(), IdentityUnavailableError);
      await d.close();
      await assert.rejects(d.applications('acme'), /closed/);
    });
  });
});
