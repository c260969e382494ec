/**
 * The role-permission mapping of a tenant (the contract's "Role-permission mapping"): the IdP's
 * roles, each with what it grants in chat, and the service's overrides of that.
 *
 * Two kinds of mapping:
 *  - tenant-wide (application_id null): the tenant roles and the application roles that apply to
 *    every application; an override here applies in every application;
 *  - one application: the application roles that apply there (every-application ones and its
 *    own); an override here beats the tenant-wide one, in that application only.
 * Tenant roles are edited tenant-wide only. How overrides reach authorization:
 * src/identity/effective-capabilities.ts.
 */
import type { Static } from '@sinclair/typebox';
import { ApiError } from '../errors/catalog.ts';
import { APPLICATION_CAPABILITIES, ENFORCED_CAPABILITIES } from '../identity/catalog.ts';
import type { CapabilityDef, RoleRecord } from '../identity/types.ts';
import type { RoleMapping, RoleMappingItem, RoleMappingPatch } from './schemas/admin.ts';
import type { Services } from './services.ts';

type Mapping = Static<typeof RoleMapping>;
type Item = Static<typeof RoleMappingItem>;

const APP_KEYS: readonly string[] = APPLICATION_CAPABILITIES;
const ALL_KEYS: readonly string[] = ENFORCED_CAPABILITIES;

/** A chat-enabled, ACTIVE application of the tenant, as everywhere else; otherwise application_not_found. */
export async function requireApplication(services: Services, tenantId: string, applicationId: string): Promise<void> {
  const app = (await services.identity.applications(tenantId)).find((a) => a.application_id === applicationId);
  if (!app || !app.chat_enabled || app.identity_status !== 'ACTIVE') {
    throw new ApiError('application_not_found', `application ${applicationId} does not exist or has chat switched off`);
  }
}

/** The roles a mapping lists, in the IdP's order. */
async function mappingRoles(services: Services, tenantId: string, applicationId: string | null): Promise<RoleRecord[]> {
  const { identity } = services;
  if (applicationId !== null) return identity.roles(tenantId, applicationId);
  const [tenantRoles, apps] = await Promise.all([identity.roles(tenantId, null), identity.applications(tenantId)]);
  // The IdP lists application roles per application; those with application_id null apply to all.
  const perApp = await Promise.all(apps.map((a) => identity.roles(tenantId, a.application_id)));
  const everywhere = new Map<string, RoleRecord>();
  for (const r of perApp.flat()) if (r.role_scope === 'application' && r.application_id === null && !everywhere.has(r.role_id)) everywhere.set(r.role_id, r);
  return [...tenantRoles, ...everywhere.values()];
}

/** Keys a role may be given in a mapping: tenant-level keys only to tenant roles (elsewhere they would grant nothing). */
function grantable(role: RoleRecord, catalog: readonly CapabilityDef[]): Set<string> {
  const level = role.role_scope === 'tenant' ? ALL_KEYS : APP_KEYS;
  return new Set(catalog.map((c) => c.key).filter((k) => level.includes(k)));
}

function inCatalogOrder(keys: readonly string[], catalog: readonly CapabilityDef[]): string[] {
  const rank = new Map(catalog.map((c, i) => [c.key, i]));
  return [...keys].sort((a, b) => (rank.get(a) ?? Infinity) - (rank.get(b) ?? Infinity) || a.localeCompare(b));
}

function note(applicationId: string | null, ttlMs: number): string {
  const scope =
    applicationId === null
      ? 'Tenant-wide mapping: applies in every application unless an application mapping overrides the role there.'
      : `Mapping of application ${applicationId}: overrides the tenant-wide mapping for its roles in this application only.`;
  return `${scope} Roles and who holds them are managed in the identity provider; a change here replaces what the role grants in chat (capabilities null restores the inherited list). tenant_owner is locked and holds every capability. Changes apply at once on the node that made them and within ${Math.ceil(ttlMs / 1000)} s on every node.`;
}

export async function buildMapping(services: Services, tenantId: string, applicationId: string | null): Promise<Mapping> {
  const { identity, store } = services;
  const [roles, catalog, tenantWide, appOverrides] = await Promise.all([
    mappingRoles(services, tenantId, applicationId),
    identity.capabilityCatalog(),
    store.roleOverrides.list(tenantId, null),
    applicationId === null ? [] : store.roleOverrides.list(tenantId, applicationId),
  ]);
  const here = applicationId === null ? ALL_KEYS : APP_KEYS;
  const tenantMap = new Map(tenantWide.map((o) => [o.role_id, o.capabilities]));
  const appMap = new Map(appOverrides.map((o) => [o.role_id, o.capabilities]));
  const items = roles.map((r): Item => {
    const app = r.locked ? undefined : appMap.get(r.role_id);
    const tenant = r.locked ? undefined : tenantMap.get(r.role_id);
    const source = app ? 'APPLICATION_OVERRIDE' : tenant ? 'TENANT_OVERRIDE' : 'IDP';
    return {
      role_id: r.role_id,
      role: r.role,
      display_name: r.display_name,
      role_scope: r.role_scope,
      application_id: r.application_id,
      system: r.system,
      locked: r.locked,
      capabilities: inCatalogOrder(app ?? tenant ?? r.capabilities, catalog),
      idp_capabilities: inCatalogOrder(r.capabilities, catalog),
      source,
    };
  });
  return {
    application_id: applicationId,
    available_capabilities: catalog.filter((c) => here.includes(c.key)).map((c) => ({ key: c.key, description: c.description })),
    missing_capabilities: here.filter((k) => !catalog.some((c) => c.key === k)),
    items,
    note: note(applicationId, services.config.identityCacheTtlMs),
  };
}

/**
 * Replaces (or, with capabilities null, drops) one role's override. Checks in this order:
 * application_not_found, role_not_found, role_locked, then the keys (invalid_request listing each).
 */
export async function patchMapping(services: Services, tenantId: string, body: Static<typeof RoleMappingPatch>): Promise<Mapping> {
  const applicationId = body.application_id ?? null;
  if (applicationId !== null) await requireApplication(services, tenantId, applicationId);
  const role = (await mappingRoles(services, tenantId, applicationId)).find((r) => r.role_id === body.role_id);
  if (!role) {
    const where = applicationId === null ? 'the tenant-wide mapping' : `the mapping of application ${applicationId}`;
    throw new ApiError('role_not_found', `role ${body.role_id} is not in ${where}`);
  }
  if (role.locked) throw new ApiError('role_locked', `role ${role.role} is locked: it holds every capability and cannot be edited`);
  const { store } = services;
  if (body.capabilities === null) {
    await store.roleOverrides.delete(tenantId, applicationId, role.role_id);
  } else {
    const catalog = await services.identity.capabilityCatalog();
    const ok = grantable(role, catalog);
    const problems = [...new Set(body.capabilities)]
      .filter((k) => !ok.has(k))
      .map((k) =>
        ALL_KEYS.includes(k) && catalog.some((c) => c.key === k)
          ? `body.capabilities: "${k}" is a tenant-level capability and cannot be granted to the application role ${role.role}`
          : `body.capabilities: unknown capability "${k}" (not a catalog key the service enforces)`,
      );
    if (problems.length > 0) throw new ApiError('invalid_request', problems);
    await store.roleOverrides.set(tenantId, applicationId, role.role_id, body.capabilities);
  }
  services.identity.effective.invalidate(tenantId);
  return buildMapping(services, tenantId, applicationId);
}
