/** The tenant overview: the tenant and its applications from the IdP, counts from the store. */
import type { Static } from '@sinclair/typebox';
import type { AccessContext } from '../../identity/access.ts';
import { defineRoute } from '../route.ts';
import { TenantOverview } from '../schemas/admin.ts';
import { TenantParams } from '../schemas/common.ts';
import { NoQuery } from '../schemas/identity.ts';
import { ADMIN_ROUTE } from './admin.ts';

export const getTenantOverview = defineRoute({
  ...ADMIN_ROUTE,
  operationId: 'getTenantOverview',
  summary: 'The tenant at a glance: applications, members and conversations',
  description:
    'applications: ACTIVE applications of the tenant at the IdP; chat_enabled_applications: those of them with chat enabled. members: distinct users with an ACTIVE membership in a (not deleted) conversation of the tenant; conversations: not deleted ones, by type.',
  method: 'GET',
  path: '/tenants/{tenant_id}/admin/overview',
  capabilities: { all: ['administration.overview.read'] },
  schemas: { params: TenantParams, query: NoQuery, response: TenantOverview },
  status: 200,
  errors: [],
  async handler({ params, access, services }): Promise<Static<typeof TenantOverview>> {
    const tenant = (access as AccessContext).tenant!;
    const [apps, counts] = await Promise.all([services.identity.applications(params.tenant_id), services.store.conversations.overview(params.tenant_id)]);
    const active = apps.filter((a) => a.identity_status === 'ACTIVE');
    return {
      tenant: { tenant_id: tenant.tenant_id, name: tenant.name, slug: tenant.slug, logo_url: tenant.logo_url },
      applications: active.length,
      chat_enabled_applications: active.filter((a) => a.chat_enabled).length,
      members: counts.members,
      conversations: counts.conversations,
    };
  },
});
