/** Sending, editing and deleting messages: validated here, ordered and applied by the conversation's actor. */
import type { Static } from '@sinclair/typebox';
import { Type } from '@sinclair/typebox';
import { ApiError } from '../../errors/catalog.ts';
import { USER_SCOPE } from '../../identity/catalog.ts';
import type { AccessContext } from '../../identity/access.ts';
import type { MessageType } from '../../store/index.ts';
import { assertEligible } from '../eligibility.ts';
import { defineRoute } from '../route.ts';
import { Message } from '../schemas/chat.ts';
import { Closed, ConversationParams, Id, MAX_INTEGER, MessageParams } from '../schemas/common.ts';
import { messageWire } from '../wire.ts';

export const MAX_BODY_CHARS = 10_000;
export const MAX_ATTACHMENTS = 10;
export const MAX_MENTIONS = 50;


export const AttachmentInput = Type.Object(
  {
    file_id: Type.String({ minLength: 1, maxLength: 256 }),
    name: Type.String({ minLength: 1, maxLength: 512 }),
    mime_type: Type.String({ minLength: 3, maxLength: 255, pattern: '^[^/\\s]+/[^/\\s]+$' }),
    size: Type.Integer({ minimum: 0, maximum: MAX_INTEGER, description: 'bytes' }),
    url: Type.Optional(Type.Union([Type.String({ format: 'uri', maxLength: 2048 }), Type.Null()])),
  },
  { ...Closed, description: 'A file owned by the file platform; the service stores the reference only' },
);

// body length and attachment count are checked by the handlers, for their own error codes.
const SendBody = Type.Object(
  {
    body: Type.String({ description: `at most ${MAX_BODY_CHARS} characters (body_too_long); may be empty for FILE messages` }),
    message_type: Type.Optional(Type.Union([Type.Literal('TEXT'), Type.Literal('FILE'), Type.Literal('SYSTEM')])),
    attachments: Type.Optional(Type.Array(AttachmentInput, { description: `at most ${MAX_ATTACHMENTS} (too_many_attachments)` })),
    actor_user_id: Type.Optional(Id),
    reply_to_message_id: Type.Optional(Id),
    mentioned_user_ids: Type.Optional(Type.Array(Id, { maxItems: MAX_MENTIONS, uniqueItems: true })),
  },
  Closed,
);
const EditBody = Type.Object(
  { body: Type.String(), mentioned_user_ids: Type.Optional(Type.Array(Id, { maxItems: MAX_MENTIONS, uniqueItems: true })) },
  Closed,
);

function assertBody(body: string): void {
  // "Characters" are code points: an emoji counts once, as a person would count it.
  let n = 0;
  for (const _ of body) if (++n > MAX_BODY_CHARS) throw new ApiError('body_too_long', `the message body exceeds ${MAX_BODY_CHARS} characters`);
}

export const sendMessage = defineRoute({
  operationId: 'sendMessage',
  summary: 'Send a message (users: as themselves; machines: on behalf of actor_user_id, or SYSTEM)',
  description:
    'message_type defaults to TEXT, or FILE when attachments are sent. SYSTEM messages have no sender and are machine-only. reply_to_message_id must name a message of this conversation that is not deleted. Rate limit: 30 messages per 10 s per user (for machines: per actor_user_id).',
  tag: 'Messages',
  method: 'POST',
  path: '/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/messages',
  audience: ['user', 'machine'],
  scopes: { user: [USER_SCOPE], machine: ['chat:sync', 'chat:messages.write'] },
  capabilities: { all: ['messages.send'] },
  context: 'application',
  cors: 'application',
  schemas: { params: ConversationParams, body: SendBody, response: Message },
  status: 201,
  rateLimit: 'send',
  errors: ['body_too_long', 'too_many_attachments', 'not_found', 'not_conversation_member', 'system_message_not_allowed', 'conversation_archived', 'invalid_reply', 'actor_not_member', 'target_user_not_eligible'],
  async handler({ params, body, access, services, idempotentId }): Promise<Static<typeof Message>> {
    const p = (access as AccessContext).principal;
    assertBody(body.body);
    const attachments = body.attachments ?? [];
    if (attachments.length > MAX_ATTACHMENTS) throw new ApiError('too_many_attachments', `at most ${MAX_ATTACHMENTS} attachments per message`);
    const type: MessageType = body.message_type ?? (attachments.length > 0 ? 'FILE' : 'TEXT');
    if (type === 'FILE' && attachments.length === 0) throw new ApiError('invalid_request', ['body.attachments: a FILE message needs at least one attachment']);
    if (type !== 'FILE' && body.body.trim() === '' && attachments.length === 0) throw new ApiError('invalid_request', ['body.body: must not be empty']);
    let sender: string | null;
    if (p.type === 'user') {
      if (type === 'SYSTEM') throw new ApiError('system_message_not_allowed', 'SYSTEM messages are sent by machine clients only');
      sender = p.user_id; // actor_user_id is ignored for users, as the contract says
    } else if (type === 'SYSTEM') {
      sender = null;
    } else {
      if (body.actor_user_id === undefined) throw new ApiError('invalid_request', ['body.actor_user_id: required for machine clients unless message_type is SYSTEM']);
      sender = body.actor_user_id;
      await assertEligible(services, params.tenant_id, params.application_id, [sender]);
    }
    const res = await services.actors.sendMessage(params, {
      sender_user_id: sender,
      sender_client_id: p.type === 'machine' ? p.client_id : null,
      body: body.body,
      message_type: type,
      reply_to_message_id: body.reply_to_message_id ?? null,
      attachments: attachments.map((a) => ({ file_id: a.file_id, name: a.name, mime_type: a.mime_type, size: a.size, url: a.url ?? null })),
      mentioned_user_ids: body.mentioned_user_ids ?? [],
      // Under an Idempotency-Key, a re-run after a crash sends the same id: the store then answers
      // the message the first run committed (created: false) instead of storing it twice.
      ...(idempotentId ? { message_id: idempotentId() } : {}),
    });
    return messageWire(res.message);
  },
});

const changeCommon = {
  tag: 'Messages',
  audience: ['user'] as 'user'[],
  scopes: { user: [USER_SCOPE] },
  capabilities: { any: ['messages.update', 'messages.delete'] } as { any: ('messages.update' | 'messages.delete')[] },
  machineRefusal: 'principal_not_allowed' as const,
  context: 'application' as const,
  cors: 'application' as const,
};

/** messages.delete is the moderator's capability (any message); messages.update alone means own messages only. */
function scopeOf(access: AccessContext): 'own' | 'any' {
  return access.capabilities.includes('messages.delete') ? 'any' : 'own';
}

export const editMessage = defineRoute({
  ...changeCommon,
  operationId: 'editMessage',
  summary: 'Edit a message: its author (messages.update) or a moderator (messages.delete)',
  description: 'The edited message has status EDITED and edited_at set. A deleted message cannot be edited (not_found).',
  method: 'PATCH',
  path: '/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/messages/{message_id}',
  schemas: { params: MessageParams, body: EditBody, response: Message },
  status: 200,
  errors: ['body_too_long', 'not_found', 'conversation_archived'],
  async handler({ params, body, access, services }): Promise<Static<typeof Message>> {
    const a = access as AccessContext;
    assertBody(body.body);
    if (body.body.trim() === '') throw new ApiError('invalid_request', ['body.body: must not be empty']);
    const { message_id, ...ref } = params;
    const user_id = a.principal.type === 'user' ? a.principal.user_id : null;
    const m = await services.actors.editMessage(ref, {
      message_id,
      body: body.body,
      ...(body.mentioned_user_ids ? { mentioned_user_ids: body.mentioned_user_ids } : {}),
      by: { user_id, client_id: null },
      scope: scopeOf(a),
    });
    return messageWire(m);
  },
});

export const deleteMessage = defineRoute({
  ...changeCommon,
  operationId: 'deleteMessage',
  summary: 'Delete a message (it stays as a tombstone): its author (messages.update) or a moderator (messages.delete); never machines',
  method: 'DELETE',
  path: '/tenants/{tenant_id}/applications/{application_id}/conversations/{conversation_id}/messages/{message_id}',
  schemas: { params: MessageParams },
  status: 204,
  errors: ['not_found'],
  async handler({ params, access, services }): Promise<void> {
    const a = access as AccessContext;
    const { message_id, ...ref } = params;
    const user_id = a.principal.type === 'user' ? a.principal.user_id : null;
    await services.actors.deleteMessage(ref, { message_id, by: { user_id, client_id: null }, scope: scopeOf(a) });
  },
});
