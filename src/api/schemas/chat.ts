/**
 * Wire shapes of the conversation domain (the contract's Resources section). Field names are the
 * store records' names, so mapping is a projection (src/api/wire.ts), never a rename.
 */
import { Type } from '@sinclair/typebox';
import { DateTime, Nullable } from './common.ts';

const Uuid = Type.String({ format: 'uuid' });

export const ConversationType = Type.Union([Type.Literal('DIRECT'), Type.Literal('GROUP'), Type.Literal('CHANNEL')]);

export const MemberSummary = Type.Object({
  user_id: Type.String(),
  display_name: Type.String({ description: 'falls back to the user id' }),
  avatar_url: Nullable(Type.String()),
});

export const Conversation = Type.Object({
  conversation_id: Uuid,
  tenant_id: Type.String(),
  application_id: Type.String(),
  type: ConversationType,
  visibility: Nullable(Type.String()),
  name: Nullable(Type.String()),
  description: Nullable(Type.String()),
  status: Type.String({ description: 'ACTIVE or ARCHIVED' }),
  created_by_user_id: Nullable(Type.String()),
  created_by_client_id: Nullable(Type.String()),
  last_activity_at: DateTime,
  created_at: DateTime,
  updated_at: DateTime,
  members: Type.Optional(Type.Array(MemberSummary, { description: 'DIRECT and GROUP: ACTIVE members, at most 20; omitted for CHANNEL' })),
  member_count: Type.Integer(),
  my_role: Type.Optional(Nullable(Type.String({ description: 'users only: OWNER, ADMIN or MEMBER; null when not a member' }))),
  has_unread: Type.Optional(Type.Boolean({ description: 'users only' })),
  unread_count: Type.Optional(Type.Integer({ description: 'users only, on get: exact number of unread messages' })),
});

export const Attachment = Type.Object({
  file_id: Type.String(),
  name: Type.String(),
  mime_type: Type.String(),
  size: Type.Integer({ minimum: 0 }),
  url: Nullable(Type.String()),
});

export const Reaction = Type.Object({ emoji: Type.String(), count: Type.Integer(), reacted_by_me: Type.Boolean() });

export const Message = Type.Object({
  message_id: Uuid,
  conversation_id: Uuid,
  tenant_id: Type.String(),
  application_id: Type.String(),
  sender_user_id: Nullable(Type.String()),
  sender_client_id: Nullable(Type.String()),
  sender: Nullable(MemberSummary),
  body: Type.String(),
  message_type: Type.String({ description: 'TEXT, SYSTEM or FILE' }),
  reply_to_message_id: Nullable(Uuid),
  attachments: Type.Array(Attachment),
  status: Type.String({ description: 'ACTIVE, EDITED or DELETED' }),
  edited_at: Nullable(DateTime),
  deleted_at: Nullable(DateTime),
  created_at: DateTime,
  updated_at: DateTime,
  reactions: Type.Array(Reaction),
  mentioned_user_ids: Type.Array(Type.String()),
  seq: Type.Integer({ description: 'position in the conversation (1, 2, ...); an addition to the contract' }),
});

export const Member = Type.Object({
  user_id: Type.String(),
  display_name: Type.String({ description: 'falls back to the user id' }),
  avatar_url: Nullable(Type.String()),
  member_id: Uuid,
  role: Type.String({ description: 'OWNER, ADMIN or MEMBER' }),
  status: Type.String({ description: 'ACTIVE, LEFT or REMOVED' }),
  joined_at: DateTime,
});

export const page = <T extends ReturnType<typeof Type.Object>>(item: T) =>
  Type.Object({ items: Type.Array(item), next_cursor: Nullable(Type.String()) });
