/**
 * The `reactions` table and the ReactionStore. One row per (message, emoji, user); summaries are
 * computed at read time for the viewer, one statement per history page (json_each over the
 * page's ids), ordered by each emoji's first reaction, then emoji for same-millisecond ties.
 */
import type { ReactionSummary } from '../records.ts';
import { timestampOrNow } from '../positions.ts';
import type { ReactionInput, ReactionStore } from '../types-messages.ts';
import type { ConversationsTable } from './conversations.ts';
import type { MessagesTable } from './messages.ts';
import { checkEpoch, jsonList, type Db, type SqliteHandle } from './shared.ts';

interface SummaryRow {
  message_id: string;
  emoji: string;
  count: number;
  mine: number | null;
}

export class ReactionsTable {
  private readonly summariesStmt;
  private readonly addStmt;
  private readonly removeStmt;
  private readonly clearStmt;

  constructor(db: Db) {
    this.summariesStmt = db.prepare<[string | null, string], SummaryRow>(`SELECT message_id, emoji, count(*) AS count, max(user_id = ?) AS mine
      FROM reactions WHERE message_id IN (SELECT value FROM json_each(?))
      GROUP BY message_id, emoji ORDER BY message_id, min(created_at), emoji`);
    this.addStmt = db.prepare<[string, string, string, string]>(
      'INSERT INTO reactions (message_id, emoji, user_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
    );
    this.removeStmt = db.prepare<[string, string, string]>('DELETE FROM reactions WHERE message_id = ? AND emoji = ? AND user_id = ?');
    this.clearStmt = db.prepare<[string]>('DELETE FROM reactions WHERE message_id = ?');
  }

  /** Summaries per message id for `viewer` (null: nobody's "me"); messages without any are absent. */
  summaries(message_ids: readonly string[], viewer: string | null): Map<string, ReactionSummary[]> {
    const out = new Map<string, ReactionSummary[]>();
    if (message_ids.length === 0) return out;
    for (const row of this.summariesStmt.all(viewer, jsonList(message_ids))) {
      let list = out.get(row.message_id);
      if (!list) out.set(row.message_id, (list = []));
      list.push({ emoji: row.emoji, count: row.count, reacted_by_me: row.mine === 1 });
    }
    return out;
  }

  add(message_id: string, emoji: string, user_id: string, at: string): boolean {
    return this.addStmt.run(message_id, emoji, user_id, at).changes > 0;
  }

  remove(message_id: string, emoji: string, user_id: string): boolean {
    return this.removeStmt.run(message_id, emoji, user_id).changes > 0;
  }

  /** A tombstone keeps no reactions. */
  clear(message_id: string): void {
    this.clearStmt.run(message_id);
  }
}

export class SqliteReactionStore implements ReactionStore {
  constructor(
    private readonly h: SqliteHandle,
    private readonly conversations: ConversationsTable,
    private readonly messages: MessagesTable,
    private readonly table: ReactionsTable,
  ) {}

  add(input: ReactionInput): Promise<{ reactions: ReactionSummary[]; changed: boolean } | null> {
    return this.change(input, (at) => this.table.add(input.message_id, input.emoji, input.user_id, at));
  }

  remove(input: ReactionInput): Promise<{ reactions: ReactionSummary[]; changed: boolean } | null> {
    return this.change(input, () => this.table.remove(input.message_id, input.emoji, input.user_id));
  }

  private async change(input: ReactionInput, apply: (at: string) => boolean): Promise<{ reactions: ReactionSummary[]; changed: boolean } | null> {
    checkEpoch(input.epoch);
    if (typeof input.emoji !== 'string' || input.emoji.length === 0) throw new RangeError('emoji must be a non-empty string');
    const at = timestampOrNow(input.at);
    return this.h.write(() => {
      const conv = this.conversations.fence(input, input.epoch);
      const message = conv ? this.messages.inConversation(conv.conversation_id, input.message_id) : null;
      if (!message || message.status === 'DELETED') return null;
      const changed = apply(at);
      return { reactions: this.table.summaries([input.message_id], input.user_id).get(input.message_id) ?? [], changed };
    });
  }
}
