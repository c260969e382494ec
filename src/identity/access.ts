/**
 * Authorization of one call: token principal + route rule + the context named in the URL.
 *
 * Order of checks (first failure wins), chosen so an outsider learns nothing about a tenant:
 *  1. audience: a machine on a user-only route → principal_not_allowed / user_required
 *  2. scope: the token needs any one scope the route lists for its audience → insufficient_scope
 *  3. binding: a token bound to a tenant/application used elsewhere → client_context_mismatch
 *  4. tenant exists, ACTIVE and chat-enabled → tenant_not_available
 *  5. user: ACTIVE member of the tenant → not_tenant_member
 *  6. application exists in the tenant, ACTIVE, chat enabled → application_not_found
 *  7. user: has access to the application → no_application_access
 *  8. user: holds the route's capabilities → missing_capability (message names the capability)
 *
 * A user's capabilities are the IdP's role capabilities mapped through the tenant's role-permission
 * overrides (effective-capabilities.ts); synchronous unless those must be loaded first.
 */
import { ApiError } from '../errors/catalog.ts';
import { USER_SCOPE, capabilitiesOfScopes, type Capability } from './catalog.ts';
import { effectiveCapabilities } from './effective-capabilities.ts';
import type { ApplicationRecord, ContextAnswer, MembershipAnswer, Principal, TenantRecord } from './types.ts';

export type Audience = 'user' | 'machine' | 'public';
export type ContextKind = 'application' | 'tenant' | 'account' | 'none';
export type CapabilityRule = { all: Capability[] } | { any: Capability[] };

export interface AccessRule {
  audience: Audience[];
  scopes: { user?: string[]; machine?: string[] };
  capabilities?: CapabilityRule;
  machineRefusal?: 'principal_not_allowed' | 'user_required';
  context: ContextKind;
}

export interface AccessContext {
  principal: Principal;
  tenant: TenantRecord | null;
  application: ApplicationRecord | null;
  member: MembershipAnswer | null;
  /** The user's role names in this context (display only); empty for machines. */
  roles: readonly string[];
  /** Capability keys held here: from roles (through the overrides) for users, from scopes for machines. Sorted; shared with caches: read only. */
  capabilities: readonly string[];
}

/** Steps 1-3: everything decidable from the token alone (no IdP call). */
export function checkPrincipal(rule: AccessRule, p: Principal, tenantId: string | undefined, appId: string | undefined): void {
  if (p.type === 'machine' && !rule.audience.includes('machine')) {
    throw new ApiError(rule.machineRefusal ?? 'principal_not_allowed', 'this operation is open to users only, not to machine clients');
  }
  if (p.type === 'user' && !rule.audience.includes('user')) {
    throw new ApiError('principal_not_allowed', 'this operation is open to machine clients only');
  }
  const accepted = p.type === 'user' ? (rule.scopes.user ?? [USER_SCOPE]) : (rule.scopes.machine ?? []);
  let scoped = false;
  for (let i = 0; i < accepted.length && !scoped; i++) scoped = p.scopes.has(accepted[i] as string);
  if (!scoped) {
    throw new ApiError('insufficient_scope', `the token lacks a required scope: one of ${accepted.join(', ')}`);
  }
  if (p.bound_tenant_id !== null) {
    if (rule.context === 'account' && p.type === 'machine') {
      throw new ApiError('client_context_mismatch', 'the token is bound to a tenant application and cannot use account routes');
    }
    if (tenantId !== undefined && tenantId !== p.bound_tenant_id) {
      throw new ApiError('client_context_mismatch', 'the token is bound to another tenant');
    }
    if (rule.context === 'application' && p.bound_application_id !== null && appId !== p.bound_application_id) {
      throw new ApiError('client_context_mismatch', 'the token is bound to another application');
    }
  }
}

/** Steps 4-8 against the identity provider's answer for (tenant, application, user). */
export function checkContext(rule: AccessRule, p: Principal, answer: ContextAnswer, appId: string | undefined): AccessContext | Promise<AccessContext> {
  const tenant = answer.tenant;
  if (tenant === null || tenant.status !== 'ACTIVE' || !tenant.chat_enabled) {
    throw new ApiError('tenant_not_available', 'the tenant is not available for chat');
  }
  const member = p.type === 'user' ? answer.member : null;
  if (p.type === 'user' && (member === null || member.status !== 'ACTIVE')) {
    throw new ApiError('not_tenant_member', 'the user is not an active member of this tenant');
  }
  let application: ApplicationRecord | null = null;
  if (rule.context === 'application') {
    application = answer.application;
    if (application === null || application.tenant_id !== tenant.tenant_id || !application.chat_enabled || application.identity_status !== 'ACTIVE') {
      throw new ApiError('application_not_found', `application ${appId ?? ''} does not exist or has chat switched off`.replace('  ', ' '));
    }
  }
  if (p.type === 'user' && member !== null) {
    let roles: readonly string[];
    let idpCapabilities: readonly string[];
    if (rule.context === 'application') {
      if (member.application === null || !member.application.has_access) {
        throw new ApiError('no_application_access', 'the user has no access to this application');
      }
      roles = member.application.roles;
      idpCapabilities = member.application.capabilities;
    } else {
      roles = member.tenant_roles;
      idpCapabilities = member.tenant_capabilities;
    }
    const held = effectiveCapabilities(answer, tenant.tenant_id, application?.application_id ?? null, roles, idpCapabilities);
    const done = (capabilities: readonly string[]): AccessContext => {
      requireCapabilities(rule.capabilities, capabilities);
      return { principal: p, tenant, application, member, roles, capabilities };
    };
    return held instanceof Promise ? held.then(done) : done(held);
  }
  return { principal: p, tenant, application, member, roles: [], capabilities: machineCapabilities(p) };
}

/** Per machine principal (cached with its token), computed once. */
const machineCaps = new WeakMap<Principal, readonly string[]>();
function machineCapabilities(p: Principal): readonly string[] {
  let caps = machineCaps.get(p);
  if (caps === undefined) machineCaps.set(p, (caps = capabilitiesOfScopes(p.scopes)));
  return caps;
}

function requireCapabilities(rule: CapabilityRule | undefined, held: readonly string[]): void {
  if (!rule) return;
  if ('all' in rule) {
    const missing = rule.all.find((c) => !held.includes(c));
    if (missing) throw new ApiError('missing_capability', `missing capability: ${missing}`);
  } else if (rule.any.length > 0 && !rule.any.some((c) => held.includes(c))) {
    throw new ApiError('missing_capability', `missing capability: one of ${rule.any.join(', ')}`);
  }
}
