/**
 * The role-permission mapping over HTTP: reading it (tenant-wide and per application), changing
 * it, every error code, and — the point of it — overrides changing what users may do at once.
 * The IdP's catalog here lacks `channels.manage`, a key the service enforces.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { caller, commonAdminErrors, type AdminTokens, type Call } from './helpers/admin.ts';
import { writeTestFixture, type TestFixture } from './helpers/fixture.ts';
import { assertErrorBody } from './helpers/http.ts';
import { startTestNode, type TestNode } from './helpers/processes.ts';
import { machineToken, userToken } from './helpers/tokens.ts';

let node: TestNode;
let fixture: TestFixture;
const tok: Record<string, string> = {};
const MAPPING = '/tenants/acme/admin/role-permissions';
const APP_MEMBER = ['conversations.read', 'conversations.create', 'groups.create', 'messages.read', 'messages.send', 'messages.update'];

before(async () => {
  fixture = await writeTestFixture({
    edit(f) {
      f.capabilities = f.capabilities.filter((c) => c.key !== 'channels.manage');
      for (const t of f.tenants) for (const r of t.roles) r.capabilities = r.capabilities.filter((k) => k !== 'channels.manage');
    },
  });
  node = await startTestNode({ CHAT_IDP_FIXTURE: fixture.path });
  tok.alice = await userToken(node.idp, 'alice', 'chat-web');
  tok.carol = await userToken(node.idp, 'carol', 'chat-web');
  tok.bob = await userToken(node.idp, 'bob', 'chat-web');
  tok.bobBound = await userToken(node.idp, 'bob');
  tok.grace = await userToken(node.idp, 'grace', 'chat-web');
  tok.mallory = await userToken(node.idp, 'mallory', 'chat-web');
  tok.machine = await machineToken(node.idp, 'acme-support-backend');
});
after(async () => {
  await node.stop();
  await fixture.remove();
});

const call: Call = (...args) => caller(node.api)(...args);
const patch = (body: unknown, token = tok.carol) => call('PATCH', MAPPING, token, body);
type Item = { role_id: string; role: string; role_scope: string; locked: boolean; capabilities: string[]; idp_capabilities: string[]; source: string };
const itemOf = (doc: { items: Item[] }, roleId: string): Item => doc.items.find((i) => i.role_id === roleId)!;
const appCaps = async (user: string, app: string): Promise<string[]> => {
  const res = await call('GET', `/tenants/acme/applications/${app}/me/capabilities`, tok[user]);
  assert.equal(res.status, 200, res.text);
  return res.json().capabilities;
};

describe('GET role-permissions', () => {
  test('tenant-wide: tenant roles and the application roles of every application, as the IdP says', async () => {
    const res = await call('GET', MAPPING, tok.carol);
    assert.equal(res.status, 200, res.text);
    const doc = res.json();
    assert.equal(doc.application_id, null);
    assert.deepEqual(doc.items.map((i: Item) => i.role_id), ['acme-tenant_owner', 'acme-tenant_admin', 'acme-tenant_member', 'acme-app_member', 'acme-app_moderator', 'acme-app_viewer']);
    const owner = itemOf(doc, 'acme-tenant_owner');
    assert.equal(owner.locked, true);
    assert.equal(owner.role_scope, 'tenant');
    assert.equal(owner.capabilities.length, 16, 'every catalog key');
    const member = itemOf(doc, 'acme-app_member');
    assert.deepEqual(member, { ...member, role: 'app_member', role_scope: 'application', locked: false, capabilities: APP_MEMBER, idp_capabilities: APP_MEMBER, source: 'IDP' });
    assert.equal(doc.available_capabilities.length, 16);
    assert.deepEqual(doc.available_capabilities[0], { key: 'conversations.read', description: 'List and read conversations of the application' });
    assert.ok(!doc.available_capabilities.some((c: { key: string }) => c.key === 'channels.manage'));
    assert.deepEqual(doc.missing_capabilities, ['channels.manage']);
    assert.match(doc.note, /tenant_owner is locked/);
  });

  test('one application: the roles that apply there (every-application ones and its own), application keys only', async () => {
    const doc = (await call('GET', `${MAPPING}?application_id=support`, tok.alice)).json();
    assert.equal(doc.application_id, 'support');
    assert.deepEqual(doc.items.map((i: Item) => i.role_id), ['acme-app_member', 'acme-app_moderator', 'acme-app_viewer', 'acme-support_agent']);
    assert.ok(doc.available_capabilities.every((c: { key: string }) => !c.key.startsWith('administration.')));
    assert.equal(doc.available_capabilities.length, 9);
    assert.deepEqual(doc.missing_capabilities, ['channels.manage']);
    const internal = (await call('GET', `${MAPPING}?application_id=internal`, tok.alice)).json();
    assert.ok(!internal.items.some((i: Item) => i.role_id === 'acme-support_agent'));
  });

  test('an application that does not exist or has chat off is application_not_found', async () => {
    assertErrorBody(await call('GET', `${MAPPING}?application_id=nope`, tok.carol), 404, 'application_not_found');
    assertErrorBody(await call('GET', `${MAPPING}?application_id=legacy`, tok.carol), 404, 'application_not_found');
    assertErrorBody(await call('GET', `/tenants/globex/admin/role-permissions?application_id=support`, await userToken(node.idp, 'erin', 'chat-web')), 404, 'application_not_found');
  });

  test('shared errors', async () => {
    await commonAdminErrors(node.api, tok as unknown as AdminTokens, 'GET', MAPPING);
    await commonAdminErrors(node.api, tok as unknown as AdminTokens, 'GET', `${MAPPING}?application_id=support`);
  });
});

describe('PATCH role-permissions changes what users hold', () => {
  test('tenant-wide override of app_member: bob (support) and grace (internal) lose messages.send at once', async () => {
    assert.ok((await appCaps('bob', 'support')).includes('messages.send'));
    const without = APP_MEMBER.filter((k) => k !== 'messages.send');
    const res = await patch({ role_id: 'acme-app_member', capabilities: without });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(itemOf(res.json(), 'acme-app_member'), { ...itemOf(res.json(), 'acme-app_member'), capabilities: without, idp_capabilities: APP_MEMBER, source: 'TENANT_OVERRIDE' });
    assert.ok(!(await appCaps('bob', 'support')).includes('messages.send'));
    assert.ok(!(await appCaps('grace', 'internal')).includes('messages.send'));
    assert.ok((await appCaps('carol', 'support')).includes('messages.send'), 'app_moderator is untouched');
    const support = (await call('GET', `${MAPPING}?application_id=support`, tok.carol)).json();
    assert.equal(itemOf(support, 'acme-app_member').source, 'TENANT_OVERRIDE');
  });

  test('an application override beats the tenant-wide one in that application only; null drops it', async () => {
    let res = await patch({ application_id: 'support', role_id: 'acme-app_member', capabilities: APP_MEMBER });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json().application_id, 'support');
    assert.equal(itemOf(res.json(), 'acme-app_member').source, 'APPLICATION_OVERRIDE');
    assert.ok((await appCaps('bob', 'support')).includes('messages.send'));
    assert.ok(!(await appCaps('grace', 'internal')).includes('messages.send'));
    res = await patch({ application_id: 'support', role_id: 'acme-app_member', capabilities: null });
    assert.equal(itemOf(res.json(), 'acme-app_member').source, 'TENANT_OVERRIDE');
    assert.ok(!(await appCaps('bob', 'support')).includes('messages.send'));
    res = await patch({ application_id: null, role_id: 'acme-app_member', capabilities: null });
    assert.equal(itemOf(res.json(), 'acme-app_member').source, 'IDP');
    assert.deepEqual(await appCaps('bob', 'support'), [...APP_MEMBER].sort());
    assert.ok((await appCaps('grace', 'internal')).includes('messages.send'));
  });

  test('routes enforce the override: without conversations.read bob cannot list conversations', async () => {
    const list = '/tenants/acme/applications/support/conversations';
    assert.equal((await call('GET', list, tok.bobBound)).status, 200);
    await patch({ application_id: 'support', role_id: 'acme-app_member', capabilities: ['messages.read'] });
    const res = await call('GET', list, tok.bobBound);
    assertErrorBody(res, 403, 'missing_capability');
    assert.match(res.json().message, /conversations\.read/);
    await patch({ application_id: 'support', role_id: 'acme-app_member', capabilities: null });
    assert.equal((await call('GET', list, tok.bobBound)).status, 200);
  });

  test('tenant roles: carol loses administration.settings.read and with it the settings route', async () => {
    const all = (await call('GET', MAPPING, tok.carol)).json();
    const admin = itemOf(all, 'acme-tenant_admin').capabilities.filter((k) => k !== 'administration.settings.read');
    assert.equal((await patch({ role_id: 'acme-tenant_admin', capabilities: admin })).status, 200);
    assertErrorBody(await call('GET', '/tenants/acme/admin/settings', tok.carol), 403, 'missing_capability');
    const caps = (await call('GET', '/tenants/acme/me/capabilities', tok.carol)).json().capabilities;
    assert.ok(!caps.includes('administration.settings.read') && caps.includes('administration.roles.manage'));
    assert.equal((await call('GET', '/tenants/acme/admin/settings', tok.alice)).status, 200, 'tenant_owner is not affected');
    assert.equal((await patch({ role_id: 'acme-tenant_admin', capabilities: null })).status, 200);
    assert.equal((await call('GET', '/tenants/acme/admin/settings', tok.carol)).status, 200);
  });
});

describe('PATCH role-permissions errors', () => {
  test('tenant_owner is role_locked (409)', async () => {
    const res = await patch({ role_id: 'acme-tenant_owner', capabilities: [] });
    assertErrorBody(res, 409, 'role_locked');
    assert.match(res.json().message, /tenant_owner/);
  });

  test('a role not in that mapping is role_not_found (404)', async () => {
    assertErrorBody(await patch({ role_id: 'acme-nope', capabilities: [] }), 404, 'role_not_found');
    assertErrorBody(await patch({ role_id: 'acme-support_agent', capabilities: [] }), 404, 'role_not_found');
    assertErrorBody(await patch({ application_id: 'support', role_id: 'acme-tenant_admin', capabilities: [] }), 404, 'role_not_found');
    assertErrorBody(await patch({ role_id: 'globex-app_member', capabilities: [] }), 404, 'role_not_found');
    assert.equal((await patch({ application_id: 'support', role_id: 'acme-support_agent', capabilities: ['messages.read'] })).status, 200);
  });

  test('an unknown or chat-disabled application is application_not_found (404)', async () => {
    assertErrorBody(await patch({ application_id: 'nope', role_id: 'acme-app_member', capabilities: [] }), 404, 'application_not_found');
    assertErrorBody(await patch({ application_id: 'legacy', role_id: 'acme-app_member', capabilities: [] }), 404, 'application_not_found');
  });

  test('unknown capability keys are invalid_request, each listed; nothing changes', async () => {
    const res = await patch({ role_id: 'acme-app_member', capabilities: ['messages.read', 'foo.bar', 'channels.manage', 'administration.overview.read'] });
    assertErrorBody(res, 400, 'invalid_request');
    const lines: string[] = res.json().message;
    assert.equal(lines.length, 3, res.text);
    assert.match(lines[0]!, /unknown capability "foo\.bar"/);
    assert.match(lines[1]!, /unknown capability "channels\.manage"/);
    assert.match(lines[2]!, /"administration\.overview\.read" is a tenant-level capability/);
    const doc = (await call('GET', MAPPING, tok.carol)).json();
    assert.equal(itemOf(doc, 'acme-app_member').source, 'IDP');
  });

  test('malformed bodies are invalid_request', async () => {
    for (const body of [{ capabilities: [] }, { role_id: 'acme-app_member' }, { role_id: 'acme-app_member', capabilities: 'messages.read' }, { role_id: 'acme-app_member', capabilities: [], extra: 1 }]) {
      assertErrorBody(await patch(body), 400, 'invalid_request');
    }
  });

  test('shared errors', async () => {
    await commonAdminErrors(node.api, tok as unknown as AdminTokens, 'PATCH', MAPPING, { role_id: 'acme-app_member', capabilities: [] });
    assert.equal(itemOf((await call('GET', MAPPING, tok.carol)).json(), 'acme-app_member').source, 'IDP', 'no refused PATCH changed anything');
  });
});
