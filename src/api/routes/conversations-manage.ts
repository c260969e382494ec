/** Updating (name, description, archive/unarchive) and deleting a conversation. */
import type { Static } from '@sinclair/typebox';
import { Type } from '@sinclair/typebox';
import { ApiError } from '../../errors/catalog.ts';
import { USER_SCOPE } from '../../identity/catalog.ts';
import type { AccessContext } from '../../identity/access.ts';
import type { ConversationDetail } from '../../store/index.ts';
import { viewerOf, visibleConversation } from '../conversation-access.ts';
import { actingOf, assertMayManage } from '../manage-rules.ts';
import { defineRoute } from '../route.ts';
import { Conversation } from '../schemas/chat.ts';
import { Closed, ConversationParams } from '../schemas/common.ts';
import { conversationWire, MEMBERS_PREVIEW } from '../wire.ts';

const UpdateBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'GROUP and CHANNEL only' })),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
    status: Type.Optional(Type.Union([Type.Literal('ACTIVE'), Type.Literal('ARCHIVED')], { description: 'ARCHIVED: read-only; ACTIVE: unarchive' })),
  },
  Closed,
);

/**
 * Update and delete follow the member-management rules (manage-rules.ts); for a DIRECT, either of
 * its two members may change its description, archive or delete it.
 */
function assertMayChange(c: ConversationDetail, a: AccessContext): void {
  if (c.type === 'DIRECT') {
    if (a.principal.type === 'user' && c.my_role === null) throw new ApiError('not_conversation_member', 'you are not a member of this conversation');
    return;
  }
  assertMayManage(c, a);
}

export const updateConversation = defineRoute({
  operationId: 'updateConversation',
  summary: 'Rename, describe, archive (read-only) or unarchive a conversation',
  description:
    'GROUP: groups.manage, or groups.create as OWNER or ADMIN; CHANNEL: channels.manage; DIRECT: either member (no name). An ARCHIVED conversation accepts only status ACTIVE (unarchive); other changes are conversation_archived. Machines: chat:sync or chat:conversations.write.',
  tag: 'Conversations',
  method: 'PATCH',
  path: '/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}',
  audience: ['user', 'machine'],
  scopes: { user: [USER_SCOPE], machine: ['chat:sync', 'chat:conversations.write'] },
  context: 'application',
  cors: 'application',
  schemas: { params: ConversationParams, body: UpdateBody, response: Conversation },
  status: 200,
  errors: ['not_found', 'missing_capability', 'not_conversation_member', 'conversation_archived'],
  async handler({ params, body, access, services }): Promise<Static<typeof Conversation>> {
    const a = access as AccessContext;
    const c = await visibleConversation(services, a, params);
    assertMayChange(c, a);
    if (c.type === 'DIRECT' && body.name !== undefined) throw new ApiError('invalid_request', ['body.name: a DIRECT conversation has no name']);
    const by = actingOf(a);
    // Unarchive first, so "unarchive and rename" in one request works; archive last, after the edits.
    if (body.status === 'ACTIVE') await services.actors.unarchive(params, by);
    if (body.name !== undefined || body.description !== undefined) {
      await services.actors.updateConversation(params, { by, ...(body.name !== undefined ? { name: body.name } : {}), ...(body.description !== undefined ? { description: body.description } : {}) });
    }
    if (body.status === 'ARCHIVED') await services.actors.archive(params, by);
    const view = await services.store.conversations.get(params, viewerOf(a), MEMBERS_PREVIEW);
    if (view === null) throw new ApiError('not_found', `conversation ${params.conversation_id} not found`);
    return conversationWire(view, a.principal.type === 'user');
  },
});

export const deleteConversation = defineRoute({
  operationId: 'deleteConversation',
  summary: 'Soft-delete a conversation (it disappears from every list; history is kept for retention)',
  description:
    'Users only (machines: principal_not_allowed). GROUP: groups.manage, or groups.create as OWNER or ADMIN; CHANNEL: channels.manage; DIRECT: either member (the pair may then start a new DIRECT).',
  tag: 'Conversations',
  method: 'DELETE',
  path: '/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}',
  audience: ['user'],
  scopes: { user: [USER_SCOPE] },
  machineRefusal: 'principal_not_allowed',
  context: 'application',
  cors: 'application',
  schemas: { params: ConversationParams },
  status: 204,
  errors: ['not_found', 'missing_capability', 'not_conversation_member'],
  async handler({ params, access, services }): Promise<void> {
    const a = access as AccessContext;
    const c = await visibleConversation(services, a, params);
    assertMayChange(c, a);
    await services.actors.softDelete(params, actingOf(a));
  },
});
