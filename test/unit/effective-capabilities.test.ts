import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EffectiveCapabilities, bindResolver, effectiveCapabilities, type OverrideSource } from '../../src/identity/effective-capabilities.ts';
import type { ContextAnswer, RoleRecord } from '../../src/identity/types.ts';

const role = (role_id: string, name: string, scope: 'tenant' | 'application', capabilities: string[], locked = false): RoleRecord => ({
  role_id, role: name, display_name: null, role_scope: scope, application_id: null, system: true, locked, capabilities,
});
const TENANT_ROLES = [role('owner', 'tenant_owner', 'tenant', ['a.x', 'm.read', 'm.send'], true), role('member', 'tenant_member', 'tenant', [])];
const APP_ROLES = [role('app', 'app_member', 'application', ['m.read', 'm.send'])];

function setup(overrides: Record<string, Record<string, string[]>>) {
  const calls = { overrides: 0, roles: 0 };
  const source: OverrideSource = {
    async list(_t, app) {
      calls.overrides++;
      return Object.entries(overrides[app ?? ''] ?? {}).map(([role_id, capabilities]) => ({ role_id, capabilities }));
    },
  };
  const r = new EffectiveCapabilities(async (_t, app) => {
    calls.roles++;
    return app === null ? TENANT_ROLES : APP_ROLES;
  }, 60_000);
  r.useOverrides(source);
  return { r, calls };
}

test('without overrides the IdP answer is used as it is, and the IdP roles are never asked', async () => {
  const { r, calls } = setup({});
  const idp = ['m.read', 'm.send'];
  assert.equal(await r.resolve('t', 'app1', ['app_member', 'tenant_member'], idp), idp);
  assert.equal(r.resolve('t', 'app1', ['app_member', 'tenant_member'], idp), idp, 'cached: synchronous');
  assert.deepEqual(calls, { overrides: 2, roles: 0 });
});

test('application override first, then tenant-wide, else the IdP list; memoized; invalidated per tenant', async () => {
  const overrides: Record<string, Record<string, string[]>> = { '': { app: ['m.read'] }, app1: {} };
  const { r, calls } = setup(overrides);
  const names = ['app_member', 'tenant_member'];
  assert.deepEqual(await r.resolve('t', 'app1', names, ['m.read', 'm.send']), ['m.read']);
  const again = r.resolve('t', 'app1', names, ['m.read', 'm.send']);
  assert.ok(!(again instanceof Promise));
  assert.equal(again, r.resolve('t', 'app1', names, ['m.read', 'm.send']), 'the same memoized array');
  overrides.app1 = { app: ['m.read', 'm.send', 'm.read'] };
  assert.deepEqual(r.resolve('t', 'app1', names, []), ['m.read'], 'stale until invalidated');
  r.invalidate('t');
  assert.deepEqual(await r.resolve('t', 'app1', names, []), ['m.read', 'm.send']);
  assert.ok(calls.roles >= 2);
});

test('a locked role keeps the IdP answer; tenant-level resolution uses tenant-wide overrides only', async () => {
  const { r } = setup({ '': { member: ['a.x'], owner: [] }, app1: { member: ['m.send'] } });
  assert.deepEqual(await r.resolve('t', 'app1', ['app_member', 'tenant_owner'], ['everything']), ['everything']);
  assert.deepEqual(await r.resolve('t', null, ['tenant_member'], []), ['a.x']);
  assert.deepEqual(await r.resolve('t', 'app1', ['tenant_member'], []), ['m.send']);
  assert.deepEqual(await r.resolve('t', 'app1', ['app_member', 'tenant_member', 'ghost'], ['x']), ['m.read', 'm.send'], 'an unknown role name adds nothing');
});

test('answers not bound to a resolver get the IdP list', async () => {
  const answer: ContextAnswer = { tenant: null, application: null, member: null };
  assert.deepEqual(effectiveCapabilities(answer, 't', null, ['r'], ['k']), ['k']);
  const { r } = setup({});
  bindResolver(answer, r);
  const out = effectiveCapabilities(answer, 't', null, ['r'], ['k']);
  assert.ok(out instanceof Promise, 'bound: asks the resolver');
  assert.deepEqual(await out, ['k']);
});
