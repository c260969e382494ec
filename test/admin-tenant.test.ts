/**
 * Tenant administration over HTTP: the overview and the settings, with every error code the
 * routes list. Conversations are seeded by a second store instance on the node's SQLite file
 * (shared-file mode).
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createStore, sqliteStorePath, type ChatStore } from '../src/store/index.ts';
import { assertErrorBody, bearer, request } from './helpers/http.ts';
import { startTestNode, type TestNode } from './helpers/processes.ts';
import { machineToken, userToken } from './helpers/tokens.ts';
import { caller, commonAdminErrors, type AdminTokens, type Call } from './helpers/admin.ts';

let node: TestNode;
let store: ChatStore;
const tok: Record<string, string> = {};
const member = (user_id: string) => ({ member_id: crypto.randomUUID(), user_id, role: 'MEMBER' as const });

before(async () => {
  node = await startTestNode({ CHAT_SQLITE_MODE: 'shared-file' });
  store = await createStore({ driver: 'sqlite', mode: 'shared-file', path: sqliteStorePath(node.dataDir) });
  const conv = (tenant_id: string, application_id: string, type: 'DIRECT' | 'GROUP' | 'CHANNEL', users: string[]) =>
    store.conversations.create({ tenant_id, application_id, conversation_id: crypto.randomUUID(), type, name: type === 'DIRECT' ? null : 'x', description: null, created_by_user_id: users[0]!, created_by_client_id: null, members: users.map(member) });
  await conv('acme', 'support', 'DIRECT', ['bob', 'carol']);
  await conv('acme', 'support', 'GROUP', ['bob', 'frank']);
  await conv('acme', 'support', 'CHANNEL', ['carol']);
  await conv('acme', 'internal', 'GROUP', ['grace']);
  const gone = (await conv('acme', 'support', 'GROUP', ['alice', 'erin'])).conversation;
  await store.conversations.softDelete({ tenant_id: 'acme', application_id: 'support', conversation_id: gone.conversation_id, epoch: gone.epoch });
  await conv('globex', 'portal', 'GROUP', ['erin', 'alice']);
  tok.alice = await userToken(node.idp, 'alice', 'chat-web');
  tok.carol = await userToken(node.idp, 'carol', 'chat-web');
  tok.bob = await userToken(node.idp, 'bob', 'chat-web');
  tok.bobBound = await userToken(node.idp, 'bob');
  tok.mallory = await userToken(node.idp, 'mallory', 'chat-web');
  tok.machine = await machineToken(node.idp, 'acme-support-backend');
});
after(async () => {
  await store.close();
  await node.stop();
});

const call: Call = (...args) => caller(node.api)(...args);
const shared = (method: string, path: string, body?: unknown) => commonAdminErrors(node.api, tok as unknown as AdminTokens, method, path, body);

describe('GET /tenants/{tenant_id}/admin/overview', () => {
  test('the tenant from the IdP, its applications, members and conversations from the store', async () => {
    const res = await call('GET', '/tenants/acme/admin/overview', tok.carol);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json(), {
      tenant: { tenant_id: 'acme', name: 'Acme Corporation', slug: 'acme', logo_url: 'https://logos.example.test/acme.png' },
      // support, internal and legacy are ACTIVE at the IdP; legacy has chat off.
      applications: 3,
      chat_enabled_applications: 2,
      // bob, carol, frank, grace: the deleted group's members and other tenants do not count.
      members: 4,
      conversations: { direct: 1, group: 2, channel: 1, total: 4 },
    });
  });

  test('errors: 401, principal_not_allowed, missing_capability, tenant checks, invalid_request', async () => {
    await shared('GET', '/tenants/acme/admin/overview');
  });
});

describe('tenant settings', () => {
  test('defaults: keep messages forever, never updated', async () => {
    const res = await call('GET', '/tenants/globex/admin/settings', await userToken(node.idp, 'erin', 'chat-web'));
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json(), { message_retention_days: null, updated_at: null });
  });

  test('PATCH sets and clears message_retention_days; GET reads it back', async () => {
    let res = await call('PATCH', '/tenants/acme/admin/settings', tok.carol, { message_retention_days: 30 });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json().message_retention_days, 30);
    assert.ok(Date.parse(res.json().updated_at) > Date.now() - 60_000);
    assert.equal((await call('GET', '/tenants/acme/admin/settings', tok.alice)).json().message_retention_days, 30);
    // An integer-like number: 7.0 is 7.
    const raw = await request(`${node.api}/tenants/acme/admin/settings`, { method: 'PATCH', headers: { ...bearer(tok.alice!), 'Content-Type': 'application/json' }, body: '{"message_retention_days": 7.0}' });
    assert.equal(raw.json().message_retention_days, 7);
    // An empty body changes nothing.
    res = await call('PATCH', '/tenants/acme/admin/settings', tok.carol, {});
    assert.equal(res.json().message_retention_days, 7);
    res = await call('PATCH', '/tenants/acme/admin/settings', tok.carol, { message_retention_days: null });
    assert.equal(res.status, 200);
    assert.equal(res.json().message_retention_days, null);
    assert.equal((await call('GET', '/tenants/acme/admin/settings', tok.carol)).json().message_retention_days, null);
    assert.deepEqual(await store.settings.listRetention(), []);
  });

  test('anything but an integer >= 1 (at most 36,500) or null is invalid_request', async () => {
    for (const bad of [0, -1, 1.5, '30', true, 36_501, [30]]) {
      const res = await call('PATCH', '/tenants/acme/admin/settings', tok.carol, { message_retention_days: bad });
      assertErrorBody(res, 400, 'invalid_request');
      assert.ok(res.json().message.some((m: string) => m.startsWith('body.message_retention_days')), res.text);
    }
    const unknown = await call('PATCH', '/tenants/acme/admin/settings', tok.carol, { retention: 3 });
    assertErrorBody(unknown, 400, 'invalid_request');
    assert.deepEqual(unknown.json().message, ['body: unknown field "retention"']);
    assertErrorBody(await call('PATCH', '/tenants/acme/admin/settings', tok.carol, [1]), 400, 'invalid_request');
    assert.equal((await call('GET', '/tenants/acme/admin/settings', tok.carol)).json().message_retention_days, null, 'nothing changed');
  });

  test('errors of GET and PATCH: 401, principal_not_allowed, missing_capability, tenant checks, invalid_request', async () => {
    await shared('GET', '/tenants/acme/admin/settings');
    await shared('PATCH', '/tenants/acme/admin/settings', { message_retention_days: 3 });
    assert.deepEqual(await store.settings.listRetention(), [], 'no refused PATCH changed anything');
  });
});
