/**
 * The `read_state` table and the ReadStateStore.
 *
 * Markers only move forward without a read-modify-write or an LWT: every write of a marker
 * carries `USING TIMESTAMP <marker>`, so Cassandra's last-write-wins keeps the highest marker
 * whatever order writes arrive in, retries and races included. (This table must never be written
 * with ordinary timestamps.)
 *
 * Unread counts are computed, not stored. A counter column per (conversation, user) would need
 * an increment per member on every message (fan-out to every member of a channel) and counters
 * are not idempotent: a timed-out increment that is retried counts twice, and they cannot be
 * fenced or reset atomically with a marker. Instead: unread = messages with seq in
 * (marker, last_seq], not DELETED, not sent by the reader, read from the conversation's buckets
 * (messages.ts countUnread); a caught-up reader (marker >= last_seq) costs no read at all, and
 * has_unread stops at the first unread message.
 */
import { checkMarkRead } from '../inputs.ts';
import type { ReadState } from '../records.ts';
import type { ReadStateStore } from '../types-messages.ts';
import type { ConversationsTable } from './conversations.ts';
import { cql, type CassandraHandle } from './cql.ts';
import type { MessagesTable } from './messages.ts';
import { numOrNull, ts } from './rows.ts';

export const READ_STATE_CQL = {
  get: cql('SELECT last_read_seq FROM read_state WHERE conversation_id = ? AND user_id = ?'),
  advance: cql('INSERT INTO read_state (conversation_id, user_id, last_read_seq, updated_at) VALUES (?, ?, ?, ?) USING TIMESTAMP ?'),
};

export class ReadStateTable {
  constructor(
    private readonly h: CassandraHandle,
    private readonly messages: MessagesTable,
  ) {}

  async marker(conversation_id: string, user_id: string): Promise<number> {
    const row = await this.h.row(READ_STATE_CQL.get, [conversation_id, user_id]);
    return row ? (numOrNull(row, 'last_read_seq') ?? 0) : 0;
  }

  /** Moves the marker forward to `seq` (a lower one loses by timestamp); 0 writes nothing. */
  async advance(conversation_id: string, user_id: string, seq: number, at: string): Promise<void> {
    if (seq <= 0) return;
    await this.h.rows(READ_STATE_CQL.advance, [conversation_id, user_id, seq, ts(at), seq]);
  }

  async state(conversation_id: string, user_id: string, last_read_seq: number, last_seq: number): Promise<ReadState> {
    if (last_read_seq >= last_seq) return { last_read_seq, unread_count: 0, has_unread: false };
    const unread_count = await this.messages.countUnread(conversation_id, user_id, last_read_seq, last_seq, false);
    return { last_read_seq, unread_count, has_unread: unread_count > 0 };
  }

  async hasUnread(conversation_id: string, user_id: string, last_seq: number): Promise<boolean> {
    const marker = await this.marker(conversation_id, user_id);
    return marker < last_seq && (await this.messages.countUnread(conversation_id, user_id, marker, last_seq, true)) > 0;
  }
}

export class CassandraReadStateStore implements ReadStateStore {
  constructor(
    private readonly h: CassandraHandle,
    private readonly conversations: ConversationsTable,
    private readonly table: ReadStateTable,
  ) {}

  async markRead(input: Parameters<ReadStateStore['markRead']>[0]): ReturnType<ReadStateStore['markRead']> {
    const at = checkMarkRead(input);
    return this.h.serial(input.conversation_id, async () => {
      const conv = await this.conversations.fence(input, input.epoch);
      if (!conv) return null;
      const before = await this.table.marker(conv.conversation_id, input.user_id);
      const target = Math.min(input.seq, conv.last_seq);
      const changed = target > before;
      if (changed) await this.table.advance(conv.conversation_id, input.user_id, target, at);
      const marker = Math.max(before, target);
      return { changed, ...(await this.table.state(conv.conversation_id, input.user_id, marker, conv.last_seq)) };
    });
  }

  async get(ref: Parameters<ReadStateStore['get']>[0], user_id: string): Promise<ReadState | null> {
    return this.h.op(async () => {
      const conv = await this.conversations.live(ref);
      if (!conv) return null;
      return this.table.state(conv.conversation_id, user_id, await this.table.marker(conv.conversation_id, user_id), conv.last_seq);
    });
  }
}
