/** What the caller may do here: roles and capability keys, at tenant and application level. */
import type { Static } from '@sinclair/typebox';
import { defineRoute } from '../route.ts';
import { ApplicationParams, TenantParams } from '../schemas/common.ts';
import { CallerCapabilities, NoQuery } from '../schemas/identity.ts';
import { TENANT_CAPABILITIES, USER_SCOPE } from '../../identity/catalog.ts';
import type { AccessContext } from '../../identity/access.ts';

/** Machines read capabilities with chat:sync or chat:users.read. */
const MACHINE_READ = ['chat:sync', 'chat:users.read'];
const TENANT_KEYS: readonly string[] = TENANT_CAPABILITIES;

export const getTenantCapabilities = defineRoute({
  operationId: 'getTenantCapabilities',
  summary: "The caller's tenant-level permissions (administration.*)",
  description:
    'The tenant-level (administration.*) capabilities granted by the user\'s tenant roles; application capabilities are read per application. Machines hold none at tenant level (their scopes act per application).',
  tag: 'Capabilities',
  method: 'GET',
  path: '/tenants/{tenant_id}/me/capabilities',
  audience: ['user', 'machine'],
  scopes: { user: [USER_SCOPE], machine: MACHINE_READ },
  context: 'tenant',
  cors: 'none',
  schemas: { params: TenantParams, query: NoQuery, response: CallerCapabilities },
  status: 200,
  errors: [],
  handler({ params, access }): Static<typeof CallerCapabilities> {
    const a = access as AccessContext;
    return {
      tenant_id: params.tenant_id,
      application_id: null,
      principal_type: a.principal.type,
      roles: a.roles as string[],
      capabilities: a.capabilities.filter((c) => TENANT_KEYS.includes(c)),
    };
  },
});

export const getApplicationCapabilities = defineRoute({
  operationId: 'getApplicationCapabilities',
  summary: "The caller's permissions in one application",
  description:
    "Users: the union of what their tenant roles and application roles grant there. Machines: the capabilities their scopes grant (chat:sync grants every application capability).",
  tag: 'Capabilities',
  method: 'GET',
  path: '/tenants/{tenant_id}/applications/{application_id}/me/capabilities',
  audience: ['user', 'machine'],
  scopes: { user: [USER_SCOPE], machine: MACHINE_READ },
  context: 'application',
  cors: 'application',
  schemas: { params: ApplicationParams, query: NoQuery, response: CallerCapabilities },
  status: 200,
  errors: [],
  handler({ params, access }): Static<typeof CallerCapabilities> {
    const a = access as AccessContext;
    return {
      tenant_id: params.tenant_id,
      application_id: params.application_id,
      principal_type: a.principal.type,
      // Sorted once when the identity answer was cached (identity-service.ts); shared, not mutated.
      roles: a.roles as string[],
      capabilities: a.capabilities as string[],
    };
  },
});
