/** Account routes: the signed-in user, across tenants. For the service's own web app (no CORS). */
import { E403A } from '../errors.ts';
import { defineRoute } from '../route.ts';
import { Me, NoQuery, TenantList } from '../schemas/identity.ts';
import { USER_SCOPE } from '../../identity/catalog.ts';
import type { Static } from '@sinclair/typebox';

export const getMe = defineRoute({
  operationId: 'getMe',
  summary: 'The signed-in user: id, profile and what the token allows',
  description:
    "Users only. The profile (display name, avatar) comes from the user's membership in the token's bound tenant, or in their first chat-enabled tenant; display_name falls back to the user id.",
  tag: 'Account',
  method: 'GET',
  path: '/me',
  audience: ['user'],
  scopes: { user: [USER_SCOPE] },
  context: 'account',
  cors: 'none',
  schemas: { query: NoQuery, response: Me },
  status: 200,
  errors: [],
  async handler({ principal, services }): Promise<Static<typeof Me>> {
    if (principal?.type !== 'user') throw new Error('unreachable: users only');
    const { identity } = services;
    let tenantId = principal.bound_tenant_id;
    if (tenantId === null) {
      const tenants = await identity.userTenants(principal.user_id);
      tenantId = tenants.find((t) => t.status === 'ACTIVE' && t.chat_enabled)?.tenant_id ?? null;
    }
    const profile = tenantId === null ? undefined : (await identity.context({ tenant_id: tenantId, user_id: principal.user_id })).member?.profile;
    return {
      user_id: principal.user_id,
      display_name: profile?.display_name ?? principal.user_id,
      avatar_url: profile?.avatar_url ?? null,
      client_id: principal.client_id,
      scopes: [...principal.scopes].sort(),
      tenant_id: principal.bound_tenant_id,
      application_id: principal.bound_application_id,
      token_expires_at: new Date(principal.exp * 1000).toISOString(),
    };
  },
});

export const listMyTenants = defineRoute({
  operationId: 'listMyTenants',
  summary: 'The chat-enabled tenants the user is an active member of',
  description: 'A token bound to one tenant (issued to an application client) sees that tenant only.',
  tag: 'Account',
  method: 'GET',
  path: '/me/tenants',
  audience: ['user'],
  scopes: { user: [USER_SCOPE] },
  context: 'account',
  cors: 'none',
  schemas: { query: NoQuery, response: TenantList },
  status: 200,
  // The contract gives this account route the whole E403a group.
  errors: [...E403A],
  async handler({ principal, services }): Promise<Static<typeof TenantList>> {
    if (principal?.type !== 'user') throw new Error('unreachable: users only');
    const tenants = await services.identity.userTenants(principal.user_id);
    const items = tenants
      .filter((t) => t.status === 'ACTIVE' && t.chat_enabled)
      .filter((t) => principal.bound_tenant_id === null || t.tenant_id === principal.bound_tenant_id)
      .map((t) => ({ tenant_id: t.tenant_id, name: t.name, slug: t.slug, logo_url: t.logo_url }));
    return { items };
  },
});
