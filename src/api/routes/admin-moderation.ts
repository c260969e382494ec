/**
 * Moderation removal: a tenant administrator removes a member from any conversation of the
 * tenant, whichever application it belongs to (the path names the tenant only, so the
 * conversation is looked up in each of the tenant's applications — a handful).
 */
import { Type } from '@sinclair/typebox';
import { ApiError } from '../../errors/catalog.ts';
import { defineRoute } from '../route.ts';
import { Closed, Id } from '../schemas/common.ts';
import { ADMIN_ROUTE } from './admin.ts';
import type { AccessContext } from '../../identity/access.ts';

const Params = Type.Object({ tenant_id: Id, conversation_id: Id, user_id: Id }, Closed);

export const moderateRemoveMember = defineRoute({
  ...ADMIN_ROUTE,
  operationId: 'moderateRemoveMember',
  summary: 'Remove a member from any conversation of the tenant (moderation); the member becomes REMOVED',
  description: 'Needs administration.members.moderate. DIRECT membership never changes (direct_conversation_immutable).',
  method: 'DELETE',
  path: '/tenants/{tenant_id}/admin/conversations/{conversation_id}/members/{user_id}',
  capabilities: { all: ['administration.members.moderate'] },
  schemas: { params: Params },
  status: 204,
  errors: ['not_found', 'direct_conversation_immutable'],
  async handler({ params, access, services }): Promise<void> {
    const a = access as AccessContext;
    const apps = await services.identity.applications(params.tenant_id);
    for (const app of apps) {
      const ref = { tenant_id: params.tenant_id, application_id: app.application_id, conversation_id: params.conversation_id };
      const c = await services.store.conversations.get(ref, { kind: 'machine' }, 0);
      if (c === null) continue;
      const by = { user_id: a.principal.type === 'user' ? a.principal.user_id : null, client_id: null };
      await services.actors.removeMember(ref, { user_id: params.user_id, by });
      return;
    }
    throw new ApiError('not_found', `conversation ${params.conversation_id} not found in this tenant`);
  },
});
