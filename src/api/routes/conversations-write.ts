/** Creating conversations: validated and checked for eligibility here, created by the actor layer. */
import type { Static } from '@sinclair/typebox';
import { Type } from '@sinclair/typebox';
import { ApiError } from '../../errors/catalog.ts';
import { USER_SCOPE } from '../../identity/catalog.ts';
import type { AccessContext } from '../../identity/access.ts';
import { assertEligible } from '../eligibility.ts';
import { defineRoute } from '../route.ts';
import { Conversation, ConversationType } from '../schemas/chat.ts';
import { ApplicationParams, Closed, Id } from '../schemas/common.ts';
import { conversationWire, MEMBERS_PREVIEW } from '../wire.ts';

/** Members named at creation; larger groups grow with the add-member route. */
export const MAX_INITIAL_MEMBERS = 100;

const CreateBody = Type.Object(
  {
    type: ConversationType,
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'required for GROUP and CHANNEL' })),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    visibility: Type.Optional(Type.Literal('PUBLIC', { description: 'CHANNEL only; default PUBLIC' })),
    member_user_ids: Type.Optional(
      Type.Array(Id, { maxItems: MAX_INITIAL_MEMBERS, uniqueItems: true, description: 'users: the other members (the caller is always added); machines: every member (required)' }),
    ),
    actor_user_id: Type.Optional(Id),
  },
  Closed,
);

export const createConversation = defineRoute({
  operationId: 'createConversation',
  summary: 'Create a DIRECT, GROUP or CHANNEL conversation (a DIRECT of the same two users is answered instead)',
  description:
    'Needs conversations.create, plus groups.create for GROUP or channels.create for CHANNEL. 201 with the conversation, also when a DIRECT of the same two members already existed (the status does not tell the two apart). Every member and the actor must be eligible tenant members with access to the application.',
  tag: 'Conversations',
  method: 'POST',
  path: '/tenants/{tenant_id}/applications/{application_id}/conversations',
  audience: ['user', 'machine'],
  scopes: { user: [USER_SCOPE], machine: ['chat:sync', 'chat:conversations.write'] },
  capabilities: { all: ['conversations.create'] },
  context: 'application',
  cors: 'application',
  schemas: { params: ApplicationParams, body: CreateBody, response: Conversation },
  status: 201,
  errors: ['target_user_not_eligible', 'actor_not_member'],
  async handler({ params, body, access, services, idempotentId }): Promise<Static<typeof Conversation>> {
    const a = access as AccessContext;
    const p = a.principal;
    const problems: string[] = [];
    if (body.type !== 'DIRECT' && body.name === undefined) problems.push(`body: missing required field "name" (required for ${body.type})`);
    if (body.type !== 'CHANNEL' && body.visibility !== undefined) problems.push('body.visibility: only CHANNEL conversations have a visibility');
    if (p.type === 'machine' && body.member_user_ids === undefined) problems.push('body: missing required field "member_user_ids" (machines list every member)');
    if (problems.length > 0) throw new ApiError('invalid_request', problems);
    if (p.type === 'user') {
      const extra = body.type === 'GROUP' ? 'groups.create' : body.type === 'CHANNEL' ? 'channels.create' : null;
      if (extra && !a.capabilities.includes(extra)) throw new ApiError('missing_capability', `missing capability: ${extra}`);
    }
    const creator = p.type === 'user' ? p.user_id : (body.actor_user_id ?? null);
    const members = [...new Set([...(body.member_user_ids ?? []), ...(p.type === 'user' ? [p.user_id] : [])])];
    if (body.type === 'DIRECT' && members.length !== 2) {
      throw new ApiError('invalid_request', [`body.member_user_ids: a DIRECT conversation has exactly 2 members in total (got ${members.length})`]);
    }
    if (p.type === 'machine' && body.type === 'DIRECT' && creator !== null && !members.includes(creator)) {
      throw new ApiError('actor_not_member', 'actor_user_id must be one of the two members of a DIRECT conversation');
    }
    await assertEligible(services, params.tenant_id, params.application_id, creator === null ? members : [...members, creator]);
    const res = await services.actors.createConversation({
      type: body.type,
      name: body.type === 'DIRECT' ? null : (body.name ?? null),
      description: body.description ?? null,
      ...(body.type === 'CHANNEL' ? { visibility: body.visibility ?? 'PUBLIC' } : {}),
      created_by_user_id: creator,
      created_by_client_id: p.type === 'machine' ? p.client_id : null,
      member_user_ids: members,
      ...params,
      // Under an Idempotency-Key, a re-run after a crash creates under the same id: the store then
      // answers the conversation the first run committed (created: false), with the same 201.
      ...(idempotentId ? { conversation_id: idempotentId() } : {}),
    });
    const ref = { conversation_id: res.conversation.conversation_id, ...params };
    const viewer = p.type === 'user' ? ({ kind: 'user', user_id: p.user_id } as const) : ({ kind: 'machine' } as const);
    const view = await services.store.conversations.get(ref, viewer, MEMBERS_PREVIEW);
    if (view === null) throw new ApiError('not_found', 'the conversation was deleted meanwhile');
    // One status whether created or found (a DIRECT of the pair, or a re-run of an Idempotency-Key).
    return conversationWire(view, p.type === 'user');
  },
});
