/** Adding and removing conversation members, and leaving. */
import type { Static } from '@sinclair/typebox';
import { Type } from '@sinclair/typebox';
import { ApiError } from '../../errors/catalog.ts';
import { USER_SCOPE } from '../../identity/catalog.ts';
import type { AccessContext } from '../../identity/access.ts';
import { isPublicChannel, viewerOf } from '../conversation-access.ts';
import { assertEligible } from '../eligibility.ts';
import { actingOf, assertMayManage, holdsManageCapability } from '../manage-rules.ts';
import { defineRoute } from '../route.ts';
import { Member } from '../schemas/chat.ts';
import { Closed, ConversationParams, Id, MemberParams } from '../schemas/common.ts';
import { memberWire, MEMBERS_PREVIEW } from '../wire.ts';
import type { Services } from '../services.ts';

const AddBody = Type.Object(
  {
    user_id: Id,
    display_name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'machines: profile hint for a user the service has never seen' })),
    avatar_url: Type.Optional(Type.String({ format: 'uri', maxLength: 2048, description: 'machines only: the second profile hint' })),
  },
  Closed,
);

async function conversationFor(services: Services, access: AccessContext, params: { tenant_id: string; application_id: string; conversation_id: string }) {
  const c = await services.store.conversations.get(params, viewerOf(access), MEMBERS_PREVIEW);
  if (c === null) throw new ApiError('not_found', `conversation ${params.conversation_id} not found`);
  return c;
}

export const addMember = defineRoute({
  operationId: 'addMember',
  summary: 'Add a member (or join a PUBLIC channel yourself)',
  description:
    'GROUP: groups.manage, or groups.create as OWNER or ADMIN of the conversation. CHANNEL: channels.manage, or the caller joins a PUBLIC channel themselves. DIRECT: never (direct_conversation_immutable). Re-adding a member who left or was removed reactivates them. Machines may pass display_name and avatar_url as profile hints for a user the service has never seen (no profile of the user recorded yet); for a user already seen they are ignored, and what the IdP says always wins.',
  tag: 'Members',
  method: 'POST',
  path: '/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/members',
  audience: ['user', 'machine'],
  scopes: { user: [USER_SCOPE], machine: ['chat:sync', 'chat:members.write'] },
  context: 'application',
  cors: 'application',
  schemas: { params: ConversationParams, body: AddBody, response: Member },
  status: 201,
  errors: ['not_found', 'missing_capability', 'not_conversation_member', 'target_user_not_eligible', 'direct_conversation_immutable', 'conversation_archived'],
  async handler({ params, body, access, services }): Promise<Static<typeof Member>> {
    const a = access as AccessContext;
    const p = a.principal;
    if (p.type === 'user' && (body.display_name !== undefined || body.avatar_url !== undefined)) {
      throw new ApiError('invalid_request', ['body: display_name and avatar_url are profile hints for machine clients only']);
    }
    const c = await conversationFor(services, a, params);
    const joiningPublic = p.type === 'user' && body.user_id === p.user_id && isPublicChannel(c);
    if (!joiningPublic) {
      // The manage capability alone suffices, as for removal; without it, a non-member is told
      // so rather than which capability is missing.
      if (p.type === 'user' && c.my_role === null && !isPublicChannel(c) && !holdsManageCapability(c, a)) {
        throw new ApiError('not_conversation_member', 'you are not a member of this conversation');
      }
      assertMayManage(c, a);
    }
    // Hints name a user the service has never seen: read before the eligibility check, which
    // itself records the IdP's profile of the user (the row the hint then fills in).
    const hinted = p.type === 'machine' && (body.display_name !== undefined || body.avatar_url !== undefined);
    const seen = hinted && (await services.store.profiles.get(params.tenant_id, [body.user_id])).length > 0;
    await assertEligible(services, params.tenant_id, params.application_id, [body.user_id]);
    if (hinted && !seen) {
      await services.store.profiles.upsert(params.tenant_id, [{ user_id: body.user_id, display_name: body.display_name ?? null, avatar_url: body.avatar_url ?? null }], 'hint');
    }
    const res = await services.actors.addMember(params, { user_id: body.user_id, by: actingOf(a) });
    return memberWire(res.member);
  },
});

export const removeMember = defineRoute({
  operationId: 'removeMember',
  summary: 'Leave (your own user_id: always allowed) or remove another member (the add rules apply)',
  tag: 'Members',
  method: 'DELETE',
  path: '/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/members/{user_id}',
  audience: ['user', 'machine'],
  scopes: { user: [USER_SCOPE], machine: ['chat:sync', 'chat:members.write'] },
  context: 'application',
  cors: 'application',
  schemas: { params: MemberParams },
  status: 204,
  errors: ['not_found', 'missing_capability', 'direct_conversation_immutable'],
  async handler({ params, access, services }): Promise<void> {
    const a = access as AccessContext;
    const { user_id, ...ref } = params;
    if (a.principal.type === 'user' && a.principal.user_id === user_id) {
      await services.actors.leave(ref, user_id);
      return;
    }
    const c = await conversationFor(services, a, ref);
    assertMayManage(c, a);
    await services.actors.removeMember(ref, { user_id, by: actingOf(a) });
  },
});
