/** What a person does in a conversation besides writing: reactions, read state, typing. Users only. */
import type { Static } from '@sinclair/typebox';
import { Type } from '@sinclair/typebox';
import { ApiError } from '../../errors/catalog.ts';
import { USER_SCOPE } from '../../identity/catalog.ts';
import type { AccessContext } from '../../identity/access.ts';
import { defineRoute } from '../route.ts';
import { Reaction } from '../schemas/chat.ts';
import { Closed, ConversationParams, Id, MAX_INTEGER } from '../schemas/common.ts';

const ReactionParams = Type.Object(
  { tenant_id: Id, application_id: Id, conversation_id: Id, message_id: Id, emoji: Type.String({ minLength: 1, maxLength: 64, description: 'the emoji itself, percent-encoded in the path' }) },
  Closed,
);
const Reactions = Type.Object({ message_id: Type.String(), reactions: Type.Array(Reaction) });
const ReadBody = Type.Object({ seq: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_INTEGER, description: 'read up to this message seq; default: the latest message' })) }, Closed);
const ReadStateWire = Type.Object({ conversation_id: Type.String(), last_read_seq: Type.Integer(), unread_count: Type.Integer(), has_unread: Type.Boolean() });

const personal = {
  audience: ['user'] as 'user'[],
  scopes: { user: [USER_SCOPE] },
  machineRefusal: 'user_required' as const,
  context: 'application' as const,
  cors: 'application' as const,
};

function userOf(access: AccessContext | null): string {
  const p = access?.principal;
  if (p?.type !== 'user') throw new ApiError('user_required', 'this operation acts as a person');
  return p.user_id;
}

/** A short grapheme string with no spaces or controls: an emoji, or a short code like `+1`. */
function assertEmoji(emoji: string): void {
  if (/[\s\p{Cc}]/u.test(emoji) || [...new Intl.Segmenter().segment(emoji)].length > 8) {
    throw new ApiError('invalid_request', ['path.emoji: must be an emoji or short reaction code without spaces']);
  }
}

const reactionRoute = (method: 'PUT' | 'DELETE', add: boolean) =>
  defineRoute({
    operationId: add ? 'addReaction' : 'removeReaction',
    summary: add ? 'React to a message with an emoji (idempotent)' : 'Take back your reaction (idempotent)',
    tag: 'Reactions',
    method,
    path: '/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/messages/{message_id}/reactions/{emoji}',
    capabilities: { all: ['messages.read'] },
    schemas: { params: ReactionParams, response: Reactions },
    status: 200,
    errors: ['not_found', 'not_conversation_member', 'conversation_archived'],
    async handler({ params, access, services }): Promise<Static<typeof Reactions>> {
      const user_id = userOf(access);
      assertEmoji(params.emoji);
      const { message_id, emoji, ...ref } = params;
      const r = add ? await services.actors.addReaction(ref, { message_id, user_id, emoji }) : await services.actors.removeReaction(ref, { message_id, user_id, emoji });
      return { message_id, reactions: r.reactions };
    },
    ...personal,
  });

export const addReaction = reactionRoute('PUT', true);
export const removeReaction = reactionRoute('DELETE', false);

export const markRead = defineRoute({
  ...personal,
  operationId: 'markRead',
  summary: 'Mark the conversation read up to a message (never moves back)',
  tag: 'Read state',
  method: 'POST',
  path: '/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/read',
  schemas: { params: ConversationParams, body: ReadBody, response: ReadStateWire },
  status: 200,
  errors: ['not_found', 'not_conversation_member'],
  async handler({ params, body, access, services }): Promise<Static<typeof ReadStateWire>> {
    const user_id = userOf(access);
    const r = await services.actors.markRead(params, { user_id, seq: body.seq ?? Number.MAX_SAFE_INTEGER });
    return { conversation_id: params.conversation_id, last_read_seq: r.last_read_seq, unread_count: r.unread_count, has_unread: r.has_unread };
  },
});

export const typing = defineRoute({
  ...personal,
  operationId: 'typing',
  summary: 'Tell the other members you are typing (not stored; delivered as a typing event)',
  tag: 'Read state',
  method: 'POST',
  path: '/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/typing',
  schemas: { params: ConversationParams },
  status: 204,
  errors: ['not_found', 'not_conversation_member', 'conversation_archived'],
  async handler({ params, access, services }): Promise<void> {
    await services.actors.typing(params, { user_id: userOf(access) });
  },
});
