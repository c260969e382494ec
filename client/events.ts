/**
 * The realtime stream's events (docs/events.md). The OpenAPI document describes requests only,
 * so these are written by hand; test/client.test.ts checks at compile time that every event the
 * node publishes (src/actors/events.ts) fits them.
 */
import type { Conversation, Member, Message } from './index.ts';

export interface EventActor {
  user_id: string | null;
  client_id: string | null;
}

export interface EventReaction {
  emoji: string;
  count: number;
}

/** A message as an event carries it: no `reacted_by_me` (one event serves every receiver). */
export type EventMessage = Omit<Message, 'reactions'> & { reactions: EventReaction[] };
export type EventConversation = Omit<Conversation, 'my_role' | 'has_unread'>;

interface Envelope<T extends string, D> {
  /** The event's position on the bus channel it was read from. */
  id: string;
  type: T;
  tenant_id: string;
  application_id: string;
  conversation_id: string;
  /** Absent on `typing`. */
  seq?: number;
  occurred_at: string;
  data: D;
}

export type ChatEvent =
  | Envelope<'message.created', { message: EventMessage }>
  | Envelope<'message.updated', { message: EventMessage; by: EventActor }>
  | Envelope<'message.deleted', { message: EventMessage; by: EventActor }>
  | Envelope<'reaction.added', { message_id: string; user_id: string; emoji: string; reactions: EventReaction[] }>
  | Envelope<'reaction.removed', { message_id: string; user_id: string; emoji: string; reactions: EventReaction[] }>
  | Envelope<'member.added', { member: Member; conversation: EventConversation; by: EventActor }>
  | Envelope<'member.removed', { member: Member; by: EventActor }>
  | Envelope<'conversation.created', { conversation: EventConversation }>
  | Envelope<'conversation.updated', { conversation: EventConversation; changed: Array<'name' | 'description'>; by: EventActor }>
  | Envelope<'conversation.archived', { conversation: EventConversation; by: EventActor }>
  | Envelope<'conversation.unarchived', { conversation: EventConversation; by: EventActor }>
  | Envelope<'conversation.deleted', { conversation_id: string; deleted_at: string; by: EventActor }>
  | Envelope<'read.updated', { user_id: string; last_read_seq: number }>
  | Envelope<'typing', { user_id: string }>;

export type ChatEventType = ChatEvent['type'];

export const CHAT_EVENT_TYPES: readonly ChatEventType[] = [
  'message.created',
  'message.updated',
  'message.deleted',
  'reaction.added',
  'reaction.removed',
  'member.added',
  'member.removed',
  'conversation.created',
  'conversation.updated',
  'conversation.archived',
  'conversation.unarchived',
  'conversation.deleted',
  'read.updated',
  'typing',
];
