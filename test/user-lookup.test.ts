/**
 * User lookup over HTTP: prefix search over known users, only those eligible in the application,
 * limits, the lookup rate limit, and every error code the route lists. Known users are seeded
 * through a second store instance on the node's SQLite file (shared-file mode); the IdP fixture
 * adds 25 members `zed01..zed25`, takes frank's application roles away (access without
 * capabilities) and adds a machine client holding only chat:users.read.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createStore, sqliteStorePath, type ChatStore } from '../src/store/index.ts';
import { caller, type Call } from './helpers/admin.ts';
import { writeTestFixture, type TestFixture } from './helpers/fixture.ts';
import { assertErrorBody } from './helpers/http.ts';
import { startTestNode, type TestNode } from './helpers/processes.ts';
import { machineToken, userToken } from './helpers/tokens.ts';

let node: TestNode;
let store: ChatStore;
let fixture: TestFixture;
const tok: Record<string, string> = {};
const zeds = Array.from({ length: 25 }, (_, i) => `zed${String(i + 1).padStart(2, '0')}`);

before(async () => {
  fixture = await writeTestFixture({
    machineClients: [{ client_id: 'acme-support-directory', tenant_id: 'acme', application_id: 'support', scopes: ['chat:users.read'] }],
    edit(f) {
      const acme = f.tenants.find((t) => t.tenant_id === 'acme')!;
      for (const id of zeds) {
        f.users.push({ user_id: id, display_name: `Zed ${id.slice(3)}`, avatar_url: null, status: 'ACTIVE' });
        acme.members.push({ user_id: id, status: 'ACTIVE', tenant_roles: ['tenant_member'], applications: {} });
      }
      acme.members.find((m) => m.user_id === 'frank')!.applications = { support: { roles: [] } };
    },
  });
  node = await startTestNode({ CHAT_SQLITE_MODE: 'shared-file', CHAT_IDP_FIXTURE: fixture.path });
  store = await createStore({ driver: 'sqlite', mode: 'shared-file', path: sqliteStorePath(node.dataDir) });
  const known = [
    ['alice', 'Alice Anders'], ['bob', 'Bob Baker'], ['carol', 'Carol Chen'], ['frank', null], ['grace', 'Grace Green'],
    ['dave', 'Dave Dunn'], ['mallory', 'Mallory Moss'], ['oscar', 'Oscar Olsen'], ['bo-ghost', 'Nobody'],
    ...zeds.map((id) => [id, `Zed ${id.slice(3)}`]),
  ] as const;
  await store.profiles.upsert('acme', known.map(([user_id, display_name]) => ({ user_id, display_name, avatar_url: null })), 'idp');
  tok.bob = await userToken(node.idp, 'bob');
  tok.bobWeb = await userToken(node.idp, 'bob', 'chat-web');
  tok.frank = await userToken(node.idp, 'frank');
  tok.carolWeb = await userToken(node.idp, 'carol', 'chat-web');
  tok.mallory = await userToken(node.idp, 'mallory', 'chat-web');
  // Lookups are limited per user (20 per 10 s): each test looks up as a user of its own.
  for (const id of zeds.slice(0, 6)) tok[id] = await userToken(node.idp, id);
  tok.machine = await machineToken(node.idp, 'acme-support-backend');
  tok.directory = await machineToken(node.idp, 'acme-support-directory');
  tok.reader = await machineToken(node.idp, 'acme-support-reader');
});
after(async () => {
  await store.close();
  await node.stop();
  await fixture.remove();
});

const call: Call = (...args) => caller(node.api)(...args);
const USERS = '/tenants/acme/applications/support/users';
let me = '';
const lookup = (q: string, token = tok[me], extra = '') => call('GET', `${USERS}?query=${encodeURIComponent(q)}${extra}`, token);
const ids = async (q: string, token = tok[me], extra = ''): Promise<string[]> => {
  const res = await lookup(q, token, extra);
  assert.equal(res.status, 200, res.text);
  return res.json().items.map((u: { user_id: string }) => u.user_id);
};

describe('user lookup', () => {
  test('prefix of user id or display name, case-insensitive, with profiles', async () => {
    me = 'zed01';
    const res = await lookup('bo');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json(), { items: [{ user_id: 'bob', display_name: 'Bob Baker', avatar_url: null }] });
    assert.deepEqual(await ids('BOB b'), ['bob']);
    assert.deepEqual(await ids('  car  '), ['carol'], 'the query is trimmed');
    const frank = (await lookup('fr')).json().items;
    assert.deepEqual(frank, [{ user_id: 'frank', display_name: 'frank', avatar_url: null }], 'display_name falls back to the user id');
  });

  test('only users eligible in the application: ACTIVE tenant members with access to it', async () => {
    me = 'zed02';
    assert.deepEqual(await ids('gr'), ['grace'], 'support is open to every active member');
    const internal = (q: string) => call('GET', `/tenants/acme/applications/internal/users?query=${q}`, tok.carolWeb);
    assert.deepEqual((await internal('gr')).json().items.map((u: { user_id: string }) => u.user_id), ['grace']);
    assert.deepEqual((await internal('bo')).json(), { items: [] }, 'internal is open to assigned users only: bob is not');
    assert.deepEqual(await ids('da'), [], 'dave is suspended');
    assert.deepEqual(await ids('ma'), [], 'mallory is not a member');
    assert.deepEqual(await ids('os'), [], 'oscar is disabled');
    assert.deepEqual(await ids('no'), [], 'bo-ghost is unknown to the IdP');
    assert.deepEqual(await ids('qq'), []);
  });

  test('limit: default 10, larger values capped at 20; ordered by user id', async () => {
    me = 'zed03';
    assert.deepEqual(await ids('zed'), zeds.slice(0, 10));
    assert.deepEqual(await ids('zed', tok[me], '&limit=3'), zeds.slice(0, 3));
    assert.deepEqual(await ids('ZED', tok[me], '&limit=20'), zeds.slice(0, 20));
    assert.deepEqual(await ids('zed', tok[me], '&limit=500'), zeds.slice(0, 20));
  });

  test('machines with chat:sync or chat:users.read', async () => {
    assert.deepEqual(await ids('bo', tok.machine), ['bob']);
    assert.deepEqual(await ids('bo', tok.directory), ['bob']);
    assertErrorBody(await lookup('bo', tok.reader), 403, 'insufficient_scope');
    assertErrorBody(await call('GET', '/tenants/acme/applications/internal/users?query=bo', tok.machine), 403, 'client_context_mismatch');
  });

  test('query_too_short (under 2 characters, after trimming) and query_too_long (over 64)', async () => {
    me = 'zed04';
    for (const q of ['', 'a', '   b   ', '😀']) assertErrorBody(await lookup(q), 400, 'query_too_short');
    assert.equal((await lookup('😀😀')).status, 200, 'characters, not UTF-16 units');
    assert.equal((await lookup('b'.repeat(64))).status, 200);
    assertErrorBody(await lookup('b'.repeat(65)), 400, 'query_too_long');
  });

  test('invalid_limit and invalid_request', async () => {
    me = 'zed05';
    for (const l of ['0', '-1', '1.5', 'ten', '']) assertErrorBody(await lookup('bo', tok[me], `&limit=${l}`), 400, 'invalid_limit');
    assertErrorBody(await call('GET', USERS, tok[me]), 400, 'invalid_request');
    assertErrorBody(await lookup('bo', tok[me], '&cursor=x'), 400, 'invalid_request');
  });

  test('context errors: 401, tenant and application checks, missing_capability', async () => {
    assertErrorBody(await call('GET', `${USERS}?query=bo`), 401, 'invalid_token');
    assertErrorBody(await lookup('bo', tok.mallory), 403, 'not_tenant_member');
    assertErrorBody(await call('GET', '/tenants/initech/applications/desk/users?query=bo', tok.mallory), 403, 'tenant_not_available');
    assertErrorBody(await call('GET', '/tenants/acme/applications/legacy/users?query=bo', tok.bobWeb), 404, 'application_not_found');
    assertErrorBody(await call('GET', '/tenants/acme/applications/internal/users?query=bo', tok.bobWeb), 403, 'no_application_access');
    assertErrorBody(await call('GET', '/tenants/acme/applications/internal/users?query=bo', tok.bob), 403, 'client_context_mismatch');
    const res = await lookup('bo', tok.frank);
    assertErrorBody(res, 403, 'missing_capability');
    assert.match(res.json().message, /conversations\.read/);
  });

  test('20 lookups per 10 s per user, then rate_limited with Retry-After', async () => {
    me = 'zed06'; // no lookup before this test
    for (let i = 0; i < 20; i++) assert.equal((await lookup('bo')).status, 200, `lookup ${i + 1}`);
    const res = await lookup('bo');
    assertErrorBody(res, 429, 'rate_limited');
    assert.ok(Number(res.headers['retry-after']) >= 1);
    assert.equal((await lookup('bo', tok.bob)).status, 200, 'other users are not affected');
  });
});
