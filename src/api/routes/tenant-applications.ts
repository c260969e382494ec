/** The tenant's applications the caller can chat in: the web app's application picker. */
import type { Static } from '@sinclair/typebox';
import { defineRoute } from '../route.ts';
import { TenantParams } from '../schemas/common.ts';
import { NoQuery } from '../schemas/identity.ts';
import { ChatApplicationList } from '../schemas/auth.ts';
import { USER_SCOPE } from '../../identity/catalog.ts';

export const listChatApplications = defineRoute({
  operationId: 'listChatApplications',
  summary: 'The applications of the tenant the caller can chat in',
  description:
    'Users only; for the service\'s own web app (no CORS). Applications that are ACTIVE, have chat enabled and that the user has access to, in the order the identity provider lists them. A token bound to an application sees that application only.',
  tag: 'Account',
  method: 'GET',
  path: '/tenants/{tenant_id}/applications',
  audience: ['user'],
  scopes: { user: [USER_SCOPE] },
  machineRefusal: 'principal_not_allowed',
  context: 'tenant',
  cors: 'none',
  schemas: { params: TenantParams, query: NoQuery, response: ChatApplicationList },
  status: 200,
  errors: [],
  async handler({ params, principal, services }): Promise<Static<typeof ChatApplicationList>> {
    if (principal?.type !== 'user') throw new Error('unreachable: users only');
    const { identity } = services;
    const apps = (await identity.applications(params.tenant_id)).filter(
      (a) => a.chat_enabled && a.identity_status === 'ACTIVE' && (principal.bound_application_id === null || a.application_id === principal.bound_application_id),
    );
    // Access per application, as every application route decides it (answers are cached).
    const answers = await Promise.all(apps.map((a) => identity.context({ tenant_id: params.tenant_id, application_id: a.application_id, user_id: principal.user_id })));
    const items = apps
      .filter((_a, i) => answers[i]?.member?.application?.has_access === true)
      .map((a) => ({ application_id: a.application_id, name: a.name, slug: a.slug, logo_url: a.logo_url }));
    return { items };
  },
});
