/**
 * The contract's wire shapes as events carry them, and the mappers from store records.
 *
 * Events go to many viewers at once, so they leave out what depends on the viewer: `my_role`
 * and `has_unread` of a Conversation, `reacted_by_me` of a reaction. `seq` is added to Message
 * (new response fields are allowed by the contract's versioning rules), so a client can order
 * and de-duplicate what it receives from history and from the stream alike.
 *
 * When the API layer's JSON Schemas for Message, Member and Conversation exist, these types
 * should be derived from them (Static<typeof ...>) so the two cannot drift.
 */
import type {
  Attachment,
  ConversationRecord,
  ConversationStatus,
  ConversationType,
  MemberRecord,
  MemberRole,
  MemberStatus,
  MessageRecord,
  MessageStatus,
  MessageType,
  ProfileSummary,
  ReactionSummary,
} from '../store/index.ts';

/** A person as the wire shows them: `display_name` falls back to the user id. */
export interface WireProfile {
  user_id: string;
  display_name: string;
  avatar_url: string | null;
}

export interface EventReaction {
  emoji: string;
  count: number;
}

export interface EventMessage {
  message_id: string;
  conversation_id: string;
  tenant_id: string;
  application_id: string;
  seq: number;
  sender_user_id: string | null;
  sender_client_id: string | null;
  /** null for a message without sender (SYSTEM). */
  sender: WireProfile | null;
  body: string;
  message_type: MessageType;
  reply_to_message_id: string | null;
  attachments: Attachment[];
  status: MessageStatus;
  edited_at: string | null;
  deleted_at: string | null;
  created_at: string;
  updated_at: string;
  reactions: EventReaction[];
  mentioned_user_ids: string[];
}

export interface EventMember extends WireProfile {
  member_id: string;
  role: MemberRole;
  status: MemberStatus;
  joined_at: string;
}

export interface EventConversation {
  conversation_id: string;
  tenant_id: string;
  application_id: string;
  type: ConversationType;
  visibility: string | null;
  name: string | null;
  description: string | null;
  status: ConversationStatus;
  created_by_user_id: string | null;
  created_by_client_id: string | null;
  last_activity_at: string;
  created_at: string;
  updated_at: string;
  member_count: number;
  /** DIRECT and GROUP: the first ACTIVE members (bounded, see EVENT_MEMBERS_PREVIEW); absent for CHANNEL. */
  members?: WireProfile[];
}

/** How many members a conversation in an event lists (DIRECT and GROUP). */
export const EVENT_MEMBERS_PREVIEW = 20;

export function wireProfile(user_id: string, profile: Pick<ProfileSummary, 'display_name' | 'avatar_url'> | null | undefined): WireProfile {
  return { user_id, display_name: profile?.display_name ?? user_id, avatar_url: profile?.avatar_url ?? null };
}

export function eventMessage(m: MessageRecord, sender: ProfileSummary | null, reactions: readonly ReactionSummary[]): EventMessage {
  return {
    message_id: m.message_id,
    conversation_id: m.conversation_id,
    tenant_id: m.tenant_id,
    application_id: m.application_id,
    seq: m.seq,
    sender_user_id: m.sender_user_id,
    sender_client_id: m.sender_client_id,
    sender: m.sender_user_id === null ? null : wireProfile(m.sender_user_id, sender),
    body: m.body,
    message_type: m.message_type,
    reply_to_message_id: m.reply_to_message_id,
    attachments: m.attachments,
    status: m.status,
    edited_at: m.edited_at,
    deleted_at: m.deleted_at,
    created_at: m.created_at,
    updated_at: m.updated_at,
    reactions: reactions.map((r) => ({ emoji: r.emoji, count: r.count })),
    mentioned_user_ids: m.mentioned_user_ids,
  };
}

export function eventMember(m: MemberRecord, profile: ProfileSummary | null | undefined): EventMember {
  return { ...wireProfile(m.user_id, profile), member_id: m.member_id, role: m.role, status: m.status, joined_at: m.joined_at };
}

/** `members`: the preview for DIRECT and GROUP; ignored for CHANNEL, where the contract omits it. */
export function eventConversation(c: ConversationRecord, members: readonly ProfileSummary[] | null): EventConversation {
  const out: EventConversation = {
    conversation_id: c.conversation_id,
    tenant_id: c.tenant_id,
    application_id: c.application_id,
    type: c.type,
    visibility: c.visibility,
    name: c.name,
    description: c.description,
    status: c.status,
    created_by_user_id: c.created_by_user_id,
    created_by_client_id: c.created_by_client_id,
    last_activity_at: c.last_activity_at,
    created_at: c.created_at,
    updated_at: c.updated_at,
    member_count: c.member_count,
  };
  if (c.type !== 'CHANNEL') out.members = (members ?? []).map((p) => wireProfile(p.user_id, p));
  return out;
}
