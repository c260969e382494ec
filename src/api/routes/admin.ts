/** Tenant administration routes that need only the identity provider. */
import type { Static } from '@sinclair/typebox';
import { Type } from '@sinclair/typebox';
import { defineRoute, type Audience } from '../route.ts';
import { DateTime, Nullable, TenantParams } from '../schemas/common.ts';
import { NoQuery } from '../schemas/identity.ts';
import { USER_SCOPE } from '../../identity/catalog.ts';

export const ApplicationRecord = Type.Object({
  application_id: Type.String(),
  name: Type.String(),
  slug: Type.String(),
  logo_url: Nullable(Type.String()),
  type: Type.String({ description: 'TENANT; other values may be added' }),
  access_mode: Type.String({ description: 'ALL_TENANT_MEMBERS or ASSIGNED_USERS; other values may be added' }),
  identity_status: Type.String({ description: 'ACTIVE or DISABLED; other values may be added' }),
  chat_enabled: Type.Boolean(),
  synced_at: DateTime,
});

const ApplicationList = Type.Object({ items: Type.Array(ApplicationRecord) });

/** What every administration route shares: users only (machines: principal_not_allowed), tenant context, no CORS. */
export const ADMIN_ROUTE = {
  tag: 'Administration',
  audience: ['user'] as Audience[],
  scopes: { user: [USER_SCOPE] },
  machineRefusal: 'principal_not_allowed' as const,
  context: 'tenant' as const,
  cors: 'none' as const,
};

export const listTenantApplications = defineRoute({
  operationId: 'listTenantApplications',
  summary: "The tenant's applications, as the identity provider last synced them",
  tag: 'Administration',
  method: 'GET',
  path: '/tenants/{tenant_id}/admin/applications',
  audience: ['user'],
  scopes: { user: [USER_SCOPE] },
  capabilities: { all: ['administration.applications.read'] },
  machineRefusal: 'principal_not_allowed',
  context: 'tenant',
  cors: 'none',
  schemas: { params: TenantParams, query: NoQuery, response: ApplicationList },
  status: 200,
  errors: [],
  async handler({ params, services }): Promise<Static<typeof ApplicationList>> {
    const apps = await services.identity.applications(params.tenant_id);
    return {
      items: apps.map((a) => ({
        application_id: a.application_id,
        name: a.name,
        slug: a.slug,
        logo_url: a.logo_url,
        type: a.type,
        access_mode: a.access_mode,
        identity_status: a.identity_status,
        chat_enabled: a.chat_enabled,
        synced_at: a.synced_at,
      })),
    };
  },
});
