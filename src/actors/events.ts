/**
 * The event catalog: every event a conversation actor publishes, with its payload. Documented
 * for clients in docs/events.md; who receives which event is fanout.ts.
 *
 * Envelope (what a stream client receives as the SSE `data`):
 *   id               the bus id on the channel it was read from (`<epoch>-<offset>`; the same
 *                    event published to several channels has one id per channel)
 *   type             one of ChatEventType; clients ignore types they do not know
 *   tenant_id, application_id, conversation_id
 *   seq              the conversation's message sequence when the mutation committed: the new
 *                    message's seq for message.created; for other stored mutations the
 *                    conversation's last_seq at that moment. Never decreases along one
 *                    conversation's events; absent on `typing`, which is not stored.
 *   occurred_at      when the mutation committed (the time stamped on the stored rows)
 *   data             the payload below
 *
 * `by` (on mutations someone other than the subject may make) names who did it: the user, and
 * the machine client when a backend acted.
 */
import type { Bus, BusEntry } from '../bus/index.ts';
import type { EventConversation, EventMember, EventMessage, EventReaction } from './wire.ts';

export interface EventActor {
  user_id: string | null;
  client_id: string | null;
}

interface Envelope<T extends string, D> {
  type: T;
  tenant_id: string;
  application_id: string;
  conversation_id: string;
  seq: number;
  occurred_at: string;
  data: D;
}

/** The envelope fields every conversation event repeats: where it happened, when, and at which seq. */
export function eventHead(ref: { tenant_id: string; application_id: string; conversation_id: string }, at: string): Omit<Envelope<string, never>, 'type' | 'data' | 'seq'>;
export function eventHead(ref: { tenant_id: string; application_id: string; conversation_id: string }, at: string, seq: number): Omit<Envelope<string, never>, 'type' | 'data'>;
export function eventHead(ref: { tenant_id: string; application_id: string; conversation_id: string }, at: string, seq?: number) {
  const head = { tenant_id: ref.tenant_id, application_id: ref.application_id, conversation_id: ref.conversation_id, occurred_at: at };
  return seq === undefined ? head : { tenant_id: head.tenant_id, application_id: head.application_id, conversation_id: head.conversation_id, occurred_at: at, seq };
}

export type MessageCreated = Envelope<'message.created', { message: EventMessage }>;
/** An edit: the message as it now is (status EDITED). */
export type MessageUpdated = Envelope<'message.updated', { message: EventMessage; by: EventActor }>;
/** The tombstone: status DELETED, body '', no attachments, mentions or reactions. */
export type MessageDeleted = Envelope<'message.deleted', { message: EventMessage; by: EventActor }>;
/** `reactions`: the message's counts after the change. */
export type ReactionAdded = Envelope<'reaction.added', { message_id: string; user_id: string; emoji: string; reactions: EventReaction[] }>;
export type ReactionRemoved = Envelope<'reaction.removed', { message_id: string; user_id: string; emoji: string; reactions: EventReaction[] }>;
/** Also on the added user's own channel, with the conversation so the client can show it. */
export type MemberAdded = Envelope<'member.added', { member: EventMember; conversation: EventConversation; by: EventActor }>;
/** `member.status`: LEFT (they left) or REMOVED (someone removed them). Also on their own channel. */
export type MemberRemoved = Envelope<'member.removed', { member: EventMember; by: EventActor }>;
export type ConversationCreated = Envelope<'conversation.created', { conversation: EventConversation }>;
/** `changed`: the fields this update set. */
export type ConversationUpdated = Envelope<'conversation.updated', { conversation: EventConversation; changed: Array<'name' | 'description'>; by: EventActor }>;
export type ConversationArchived = Envelope<'conversation.archived', { conversation: EventConversation; by: EventActor }>;
export type ConversationUnarchived = Envelope<'conversation.unarchived', { conversation: EventConversation; by: EventActor }>;
export type ConversationDeleted = Envelope<'conversation.deleted', { conversation_id: string; deleted_at: string; by: EventActor }>;
/** The reader's marker moved forward. */
export type ReadUpdated = Envelope<'read.updated', { user_id: string; last_read_seq: number }>;
/** Ephemeral: never stored, never replayed beyond the resume window; no `seq`. */
export type Typing = Omit<Envelope<'typing', { user_id: string }>, 'seq'>;

/** What the actor publishes: the envelope without `id`, which the bus assigns per channel. */
export type ChatEventBody =
  | MessageCreated
  | MessageUpdated
  | MessageDeleted
  | ReactionAdded
  | ReactionRemoved
  | MemberAdded
  | MemberRemoved
  | ConversationCreated
  | ConversationUpdated
  | ConversationArchived
  | ConversationUnarchived
  | ConversationDeleted
  | ReadUpdated
  | Typing;

export type ChatEventType = ChatEventBody['type'];

/** The envelope as a client receives it. */
export type ChatEvent = ChatEventBody & { id: string };

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

/** A push delivery job: one new message; the push worker finds devices (and candidates when absent). */
export interface PushJob {
  tenant_id: string;
  application_id: string;
  conversation_id: string;
  message_id: string;
  /**
   * The contract's candidates (ACTIVE members but the sender; CHANNEL: mentioned ACTIVE members
   * but the sender) as the actor knew them when it committed the message, when it knew them
   * without reading the store; absent: the worker computes them from the store.
   */
  candidates?: string[];
  /**
   * When the message was sent (its created_at): only devices registered by then receive it, on
   * every attempt of the job, on whichever node runs it. Absent (jobs queued by an older node):
   * the worker reads it from the message.
   */
  sent_at?: string;
}

/** The bus as the chat service uses it. */
export type ChatBus = Bus<ChatEventBody, PushJob>;

/** The envelope a client receives, from what the bus delivered. */
export function toChatEvent(entry: BusEntry<ChatEventBody>): ChatEvent {
  return { id: entry.id, ...entry.event };
}
