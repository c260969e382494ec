/**
 * What route handlers hand to the ActorHost, and what they get back.
 *
 * Intents are already authorized by the API layer (token, scopes, capabilities, eligibility of
 * users in the identity provider). The actor enforces what depends on the conversation's state
 * and must be decided in order with other mutations: existence, ARCHIVED being read-only,
 * membership, DIRECT immutability, reply targets, authorship. Results are store records and
 * views (src/store/records.ts); the API maps them to responses (wire.ts has the mappers events
 * use, which the API can share).
 */
import type {
  Attachment,
  ConversationRecord,
  ConversationType,
  MemberRecord,
  MemberRole,
  MemberView,
  MessageType,
  MessageView,
  ReactionSummary,
  ReadState,
  StoreContext,
} from '../store/index.ts';

export type { ConversationRef } from '../store/index.ts';

/** Who acts: a user, or a machine client (on behalf of `user_id`, or alone). */
export interface ActingPrincipal {
  user_id: string | null;
  client_id: string | null;
}

export interface CreateConversationIntent extends StoreContext {
  /** Default: a new UUID. Pass one to make a retried create land on the same conversation. */
  conversation_id?: string;
  type: ConversationType;
  name: string | null;
  description: string | null;
  /** CHANNEL only; default PUBLIC. */
  visibility?: string | null;
  /** The creator; OWNER of a GROUP or CHANNEL and added as a member if not listed. */
  created_by_user_id: string | null;
  created_by_client_id: string | null;
  /** The members (creator included or not). DIRECT: exactly two distinct users in all. */
  member_user_ids: string[];
}

export interface CreateConversationResult {
  conversation: ConversationRecord;
  /** false: a DIRECT conversation of the same pair existed (answered instead), or a retry. */
  created: boolean;
}

export interface SendMessageIntent {
  /** Default: a new UUID. A send with a message_id already stored answers that message. */
  message_id?: string;
  /** null only for SYSTEM messages (machines). */
  sender_user_id: string | null;
  /** Set when a machine sends: then a non-member sender is `actor_not_member`, not `not_conversation_member`. */
  sender_client_id: string | null;
  body: string;
  message_type: MessageType;
  reply_to_message_id?: string | null;
  attachments?: Attachment[];
  mentioned_user_ids?: string[];
}

export interface SendMessageResult {
  /** reactions [] and sender's profile; as the sender sees it. */
  message: MessageView;
  /** false when message_id was already stored (a retry): nothing new was written or published. */
  created: boolean;
}

/**
 * Who may change a message: `own` when the caller holds only the author's capability
 * (messages.update), so the actor checks authorship in order with other mutations; `any` for a
 * moderator (messages.delete).
 */
export type MessageChangeScope = 'own' | 'any';

export interface EditMessageIntent {
  message_id: string;
  body: string;
  mentioned_user_ids?: string[];
  by: ActingPrincipal;
  scope: MessageChangeScope;
}

export interface DeleteMessageIntent {
  message_id: string;
  by: ActingPrincipal;
  scope: MessageChangeScope;
}

export interface ReactionIntent {
  message_id: string;
  user_id: string;
  emoji: string;
}

export interface ReactionResult {
  /** The message's reactions as `user_id` sees them. */
  reactions: ReactionSummary[];
  changed: boolean;
}

export interface AddMemberIntent {
  user_id: string;
  /** Default MEMBER. */
  role?: MemberRole;
  by: ActingPrincipal;
}

export interface AddMemberResult {
  member: MemberView;
  /** false: already an ACTIVE member (answered as is). */
  changed: boolean;
}

export interface RemoveMemberIntent {
  user_id: string;
  /** `by.user_id === user_id` is leaving (status LEFT); anyone else removes (REMOVED). */
  by: ActingPrincipal;
}

export interface RemoveMemberResult {
  member: MemberRecord;
  /** false: the member was not ACTIVE any more. */
  changed: boolean;
}

export interface UpdateConversationIntent {
  /** Only the fields present change. */
  name?: string | null;
  description?: string | null;
  by: ActingPrincipal;
}

export interface MarkReadIntent {
  user_id: string;
  /** Read up to this message seq; clamped to the last message, never moves back. */
  seq: number;
}

export type MarkReadResult = ReadState & { changed: boolean };

export interface TypingIntent {
  user_id: string;
}

export interface ActorLog {
  warn(details: Record<string, unknown>, message: string): void;
}

export interface ActorHostStats {
  /** Actors in memory now. */
  actors: number;
  activations: number;
  passivations: number;
  /** Actors that found themselves fenced out by a newer owner. */
  fenced: number;
  /** Push jobs the bus refused (full queue): push is best effort. */
  pushJobsDropped: number;
  /** Messages that made no push job because every candidate was online when they committed (chat_push_jobs_skipped_online_total). */
  pushJobsSkippedOnline: number;
  /** Event publishes the bus refused. */
  publishFailures: number;
}
