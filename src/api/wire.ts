/**
 * Store records → wire shapes. Projections only: the records already use the contract's names.
 * Viewer-specific fields (my_role, has_unread, unread_count) appear for users only, and
 * `display_name` falls back to the user id wherever a person is shown.
 */
import type { Static } from '@sinclair/typebox';
import type { ConversationDetail, ConversationView, MemberView, MessageView, ProfileSummary } from '../store/index.ts';
import type { Conversation, Member, MemberSummary, Message } from './schemas/chat.ts';

/** How many ACTIVE members a DIRECT or GROUP conversation carries inline (contract: bounded). */
export const MEMBERS_PREVIEW = 20;

export function person(p: ProfileSummary): Static<typeof MemberSummary> {
  return { user_id: p.user_id, display_name: p.display_name ?? p.user_id, avatar_url: p.avatar_url };
}

export function conversationWire(c: ConversationView | ConversationDetail, viewerIsUser: boolean): Static<typeof Conversation> {
  const out: Static<typeof Conversation> = {
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
  if (c.type !== 'CHANNEL' && c.members) out.members = c.members.map(person);
  if (viewerIsUser) {
    out.my_role = c.my_role;
    out.has_unread = c.has_unread;
    if ('unread_count' in c) out.unread_count = c.unread_count;
  }
  return out;
}

export function messageWire(m: MessageView): Static<typeof Message> {
  return {
    message_id: m.message_id,
    conversation_id: m.conversation_id,
    tenant_id: m.tenant_id,
    application_id: m.application_id,
    sender_user_id: m.sender_user_id,
    sender_client_id: m.sender_client_id,
    sender: m.sender ? person(m.sender) : m.sender_user_id ? person({ user_id: m.sender_user_id, display_name: null, avatar_url: null }) : null,
    body: m.body,
    message_type: m.message_type,
    reply_to_message_id: m.reply_to_message_id,
    attachments: m.attachments,
    status: m.status,
    edited_at: m.edited_at,
    deleted_at: m.deleted_at,
    created_at: m.created_at,
    updated_at: m.updated_at,
    reactions: m.reactions,
    mentioned_user_ids: m.mentioned_user_ids,
    seq: m.seq,
  };
}

export function memberWire(m: MemberView): Static<typeof Member> {
  return {
    user_id: m.user_id,
    display_name: m.display_name ?? m.user_id,
    avatar_url: m.avatar_url,
    member_id: m.member_id,
    role: m.role,
    status: m.status,
    joined_at: m.joined_at,
  };
}
