/** The role-permission mapping: read it, and override what one role grants in chat. */
import type { Static } from '@sinclair/typebox';
import { buildMapping, patchMapping, requireApplication } from '../role-mapping.ts';
import { defineRoute } from '../route.ts';
import { RoleMapping, RoleMappingPatch, RoleMappingQuery } from '../schemas/admin.ts';
import { TenantParams } from '../schemas/common.ts';
import { NoQuery } from '../schemas/identity.ts';
import { ADMIN_ROUTE } from './admin.ts';

export const getRolePermissions = defineRoute({
  ...ADMIN_ROUTE,
  operationId: 'getRolePermissions',
  summary: 'The role-to-capability mapping, tenant-wide or of one application',
  description:
    'Without application_id: the tenant roles and the application roles that apply to every application. With it: the application roles that apply in that application. capabilities is what the role grants in chat there: the override of this mapping, else (application mappings) the tenant-wide override, else the IdP\'s list; source says which.',
  method: 'GET',
  path: '/tenants/{tenant_id}/admin/role-permissions',
  capabilities: { all: ['administration.roles.read'] },
  schemas: { params: TenantParams, query: RoleMappingQuery, response: RoleMapping },
  status: 200,
  errors: ['application_not_found'],
  async handler({ params, query, services }): Promise<Static<typeof RoleMapping>> {
    const applicationId = query.application_id ?? null;
    if (applicationId !== null) await requireApplication(services, params.tenant_id, applicationId);
    return buildMapping(services, params.tenant_id, applicationId);
  },
});

export const updateRolePermissions = defineRoute({
  ...ADMIN_ROUTE,
  operationId: 'updateRolePermissions',
  summary: "Replaces what one role grants in chat (or, with capabilities null, restores the inherited list)",
  description:
    'Answers the whole updated mapping. Errors in this order: application_not_found (application_id), role_not_found (the role is not in that mapping), role_locked (tenant_owner), invalid_request (capability keys that are unknown or, on an application role, tenant-level; each listed).',
  method: 'PATCH',
  path: '/tenants/{tenant_id}/admin/role-permissions',
  capabilities: { all: ['administration.roles.manage'] },
  schemas: { params: TenantParams, query: NoQuery, body: RoleMappingPatch, response: RoleMapping },
  status: 200,
  errors: ['application_not_found', 'role_not_found', 'role_locked'],
  async handler({ params, body, services }): Promise<Static<typeof RoleMapping>> {
    return patchMapping(services, params.tenant_id, body);
  },
});
