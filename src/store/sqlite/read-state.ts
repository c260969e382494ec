/**
 * The `read_state` table and unread counting. A marker only moves forward (the upsert's WHERE),
 * so a late or duplicated mark-read can never make read messages unread again.
 *
 * Unread = seq > marker, not DELETED, not sent by the user (SYSTEM messages, without a sender,
 * count). Both the count and the yes/no are range scans of messages_by_seq starting at the
 * marker: the count costs the unread messages, the yes/no stops at the first one.
 */
import { checkMarkRead } from '../inputs.ts';
import type { ReadState } from '../records.ts';
import type { ReadStateStore } from '../types-messages.ts';
import type { ConversationsTable } from './conversations.ts';
import type { Db, SqliteHandle } from './shared.ts';

const UNREAD = "conversation_id = ? AND seq > ? AND status <> 'DELETED' AND sender_user_id IS NOT ?";

export const UNREAD_COUNT_SQL = `SELECT count(*) FROM messages WHERE ${UNREAD}`;

export class ReadStateTable {
  private readonly markerStmt;
  private readonly advanceStmt;
  private readonly countStmt;
  private readonly anyStmt;

  constructor(db: Db) {
    this.markerStmt = db.prepare<[string, string], number>('SELECT last_read_seq FROM read_state WHERE conversation_id = ? AND user_id = ?').pluck();
    this.advanceStmt = db.prepare<[string, string, number, string]>(`INSERT INTO read_state (conversation_id, user_id, last_read_seq, updated_at)
      VALUES (?, ?, ?, ?)
      ON CONFLICT (conversation_id, user_id) DO UPDATE SET last_read_seq = excluded.last_read_seq, updated_at = excluded.updated_at
      WHERE excluded.last_read_seq > read_state.last_read_seq`);
    this.countStmt = db.prepare<[string, number, string], number>(UNREAD_COUNT_SQL).pluck();
    this.anyStmt = db.prepare<[string, number, string], number>(`SELECT EXISTS (SELECT 1 FROM messages WHERE ${UNREAD})`).pluck();
  }

  marker(conversation_id: string, user_id: string): number {
    return this.markerStmt.get(conversation_id, user_id) ?? 0;
  }

  /** Moves the marker forward to `seq`; true when it moved. A new row starts at `seq`. */
  advance(conversation_id: string, user_id: string, seq: number, at: string): boolean {
    if (seq <= 0) return false; // 0 is where every marker starts; no row needed
    return this.advanceStmt.run(conversation_id, user_id, seq, at).changes > 0;
  }

  /** The state for a marker; `last_seq` lets a caught-up reader skip the scan. */
  state(conversation_id: string, user_id: string, last_read_seq: number, last_seq: number): ReadState {
    if (last_read_seq >= last_seq) return { last_read_seq, unread_count: 0, has_unread: false };
    const unread_count = this.countStmt.get(conversation_id, last_read_seq, user_id) ?? 0;
    return { last_read_seq, unread_count, has_unread: unread_count > 0 };
  }

  hasUnread(conversation_id: string, user_id: string, last_seq: number): boolean {
    const marker = this.marker(conversation_id, user_id);
    return marker < last_seq && this.anyStmt.get(conversation_id, marker, user_id) === 1;
  }
}

export class SqliteReadStateStore implements ReadStateStore {
  constructor(
    private readonly h: SqliteHandle,
    private readonly conversations: ConversationsTable,
    private readonly table: ReadStateTable,
  ) {}

  async markRead(input: Parameters<ReadStateStore['markRead']>[0]): ReturnType<ReadStateStore['markRead']> {
    const at = checkMarkRead(input);
    return this.h.write(() => {
      const conv = this.conversations.fence(input, input.epoch);
      if (!conv) return null;
      const changed = this.table.advance(conv.conversation_id, input.user_id, Math.min(input.seq, conv.last_seq), at);
      const marker = this.table.marker(conv.conversation_id, input.user_id);
      return { changed, ...this.table.state(conv.conversation_id, input.user_id, marker, conv.last_seq) };
    });
  }

  async get(ref: Parameters<ReadStateStore['get']>[0], user_id: string): Promise<ReadState | null> {
    return this.h.read(() => {
      const conv = this.conversations.live(ref);
      if (!conv) return null;
      return this.table.state(conv.conversation_id, user_id, this.table.marker(conv.conversation_id, user_id), conv.last_seq);
    });
  }
}
