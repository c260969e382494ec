/**
 * Messages, reactions and read state: the parts of the store port the actor writes on every
 * send. Shared contract (scope, atomicity, fencing, nulls): types.ts.
 */
import type { Attachment, MessageRecord, MessageType, MessageView, Page, ReactionSummary, ReadState } from './records.ts';
import type { MessagePosition } from './positions.ts';
import type { ConversationRef, ConversationWrite } from './types-conversations.ts';

export interface AppendMessageInput extends ConversationWrite {
  message_id: string;
  /** Assigned by the owning actor: last_seq + 1. Unique within the conversation. */
  seq: number;
  sender_user_id: string | null;
  sender_client_id: string | null;
  body: string;
  message_type: MessageType;
  reply_to_message_id?: string | null;
  attachments?: Attachment[];
  mentioned_user_ids?: string[];
  /**
   * The id may come again in a retry whose earlier try's outcome is unknown (a send under an
   * Idempotency-Key: the id is derived from the key). A store whose write can land after it
   * answered a failure (Cassandra: a write timeout) then binds the id to its seq and created_at
   * before writing, and an append finding the id bound by an earlier try writes the message
   * there, with that try's created_at, instead of at `seq` (which stays unused): every try
   * stores the same row, never a second one. Costs such a store one more round (an LWT) per
   * append; a store whose write is atomic with its dedupe (SQLite) ignores it.
   */
  retryable_id?: boolean;
}

export interface MessageWrite extends ConversationWrite {
  message_id: string;
}

export interface ListMessagesQuery extends ConversationRef {
  /** Whose `reacted_by_me` to compute; null for machines. */
  viewer_user_id: string | null;
  limit: number;
  /** Continue with messages older than this seq. */
  after?: MessagePosition | null;
}

export interface RetentionInput {
  tenant_id: string;
  /** Messages created more than `days` days before `at` are deleted. */
  days: number;
  at?: string;
  /** Rows per transaction (default 500), so live writes interleave with a large purge. */
  batch_size?: number;
}

export interface MessageStore {
  /**
   * Stores a message (status ACTIVE) and advances the conversation: last_seq to at least `seq`,
   * last_activity_at to at least `at`. A retry (same message_id in the same conversation) answers
   * the stored message with `created: false` and changes nothing. SeqConflictError when another
   * message holds `seq`; IdConflictError when message_id belongs to another conversation. null
   * when the conversation is absent or deleted.
   */
  append(input: AppendMessageInput): Promise<{ message: MessageRecord; created: boolean } | null>;

  /**
   * Replaces the body (and mentions, when given): status EDITED, edited_at and updated_at set.
   * A tombstone is answered unchanged (the actor refuses edits of deleted messages before).
   * null when the message is not in this conversation.
   */
  edit(input: MessageWrite & { body: string; mentioned_user_ids?: string[] }): Promise<MessageRecord | null>;

  /**
   * Tombstones the message: body '', attachments [], mentions [], status DELETED, deleted_at set,
   * its reactions removed. The row stays (history still lists it). Deleting a tombstone answers
   * it unchanged. null when the message is not in this conversation.
   */
  tombstone(input: MessageWrite): Promise<MessageRecord | null>;

  /** One message with reactions for `viewer_user_id`; null when not in this conversation. */
  get(ref: ConversationRef, message_id: string, viewer_user_id: string | null): Promise<MessageView | null>;

  /**
   * History newest first (seq DESC), tombstones included, served by the (conversation_id, seq)
   * index. null when the conversation is absent or deleted.
   */
  list(query: ListMessagesQuery): Promise<Page<MessageView, MessagePosition> | null>;

  /**
   * Retention: really deletes (not tombstones) the tenant's messages created before
   * `at - days`, with their reactions, in batches of `batch_size`, each its own transaction.
   * Answers how many were deleted. Conversations keep last_seq, so seqs are never reused.
   */
  deleteExpired(input: RetentionInput): Promise<number>;
}

export interface ReactionInput extends MessageWrite {
  user_id: string;
  emoji: string;
}

export interface ReactionStore {
  /**
   * Adds the user's `emoji` reaction (a second add of the same is a no-op: `changed: false`) and
   * answers the message's reactions as `user_id` sees them. null when the message is not in this
   * conversation or is a tombstone.
   */
  add(input: ReactionInput): Promise<{ reactions: ReactionSummary[]; changed: boolean } | null>;

  /** Removes it (absent: `changed: false`); answers like add. */
  remove(input: ReactionInput): Promise<{ reactions: ReactionSummary[]; changed: boolean } | null>;
}

export interface ReadStateStore {
  /**
   * Moves the user's read marker forward to `seq`, clamped to the conversation's last_seq; a
   * lower value than the stored one changes nothing (markers never move back). Answers the new
   * state. null when the conversation is absent or deleted.
   */
  markRead(input: ConversationWrite & { user_id: string; seq: number }): Promise<(ReadState & { changed: boolean }) | null>;

  /** The user's state (marker 0 when never read); null when the conversation is absent. */
  get(ref: ConversationRef, user_id: string): Promise<ReadState | null>;
}
