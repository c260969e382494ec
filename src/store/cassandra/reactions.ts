/**
 * The `reactions` table (partition per message, one row per emoji and user) and the
 * ReactionStore. Summaries are computed at read time for the viewer: ordered by each emoji's
 * first reaction, then emoji.
 *
 * Add and remove are read-then-write inside the conversation's write queue, not LWTs: the owning
 * actor is the only writer of a conversation (fenced), and mixing LWT and plain writes on one
 * partition (a tombstone clears it with a plain partition delete) would let clock skew between
 * Paxos ballots and client timestamps resurrect a cleared reaction.
 */
import type { ReactionSummary } from '../records.ts';
import { timestampOrNow } from '../positions.ts';
import type { ReactionInput, ReactionStore } from '../types-messages.ts';
import type { Mutation } from './activity.ts';
import type { ConversationsTable } from './conversations.ts';
import { cql, type CassandraHandle } from './cql.ts';
import type { MessagesTable } from './messages.ts';
import { str, time, ts } from './rows.ts';
import { checkEpoch } from './validate.ts';

export const REACTIONS_CQL = {
  get: cql('SELECT user_id FROM reactions WHERE message_id = ? AND emoji = ? AND user_id = ?'),
  add: cql('INSERT INTO reactions (message_id, emoji, user_id, created_at) VALUES (?, ?, ?, ?)'),
  remove: cql('DELETE FROM reactions WHERE message_id = ? AND emoji = ? AND user_id = ?'),
  list: cql('SELECT emoji, user_id, created_at FROM reactions WHERE message_id = ?'),
  clear: cql('DELETE FROM reactions WHERE message_id = ?'),
};

export class ReactionsTable {
  constructor(private readonly h: CassandraHandle) {}

  async summaries(message_id: string, viewer: string | null): Promise<ReactionSummary[]> {
    const by = new Map<string, { count: number; mine: boolean; first: string }>();
    for (const r of await this.h.rows(REACTIONS_CQL.list, [message_id])) {
      const emoji = str(r, 'emoji');
      const at = time(r, 'created_at');
      const s = by.get(emoji) ?? { count: 0, mine: false, first: at };
      s.count += 1;
      s.mine ||= str(r, 'user_id') === viewer;
      if (at < s.first) s.first = at;
      by.set(emoji, s);
    }
    return [...by.entries()]
      .sort(([ea, a], [eb, b]) => (a.first !== b.first ? (a.first < b.first ? -1 : 1) : ea < eb ? -1 : ea > eb ? 1 : 0))
      .map(([emoji, s]) => ({ emoji, count: s.count, reacted_by_me: s.mine }));
  }

  /** Summaries for a page, one partition read per message, in parallel. */
  async summariesOf(message_ids: readonly string[], viewer: string | null): Promise<Map<string, ReactionSummary[]>> {
    const lists = await Promise.all(message_ids.map((id) => this.summaries(id, viewer)));
    return new Map(message_ids.map((id, i) => [id, lists[i]!]));
  }

  async has(message_id: string, emoji: string, user_id: string): Promise<boolean> {
    return (await this.h.row(REACTIONS_CQL.get, [message_id, emoji, user_id])) !== null;
  }

  async add(message_id: string, emoji: string, user_id: string, at: string): Promise<void> {
    await this.h.rows(REACTIONS_CQL.add, [message_id, emoji, user_id, ts(at)]);
  }

  async remove(message_id: string, emoji: string, user_id: string): Promise<void> {
    await this.h.rows(REACTIONS_CQL.remove, [message_id, emoji, user_id]);
  }

  clearRow(message_id: string): Mutation {
    return [REACTIONS_CQL.clear, [message_id]];
  }
}

export class CassandraReactionStore implements ReactionStore {
  constructor(
    private readonly h: CassandraHandle,
    private readonly conversations: ConversationsTable,
    private readonly messages: MessagesTable,
    private readonly table: ReactionsTable,
  ) {}

  async add(input: ReactionInput): Promise<{ reactions: ReactionSummary[]; changed: boolean } | null> {
    return this.change(input, true);
  }

  async remove(input: ReactionInput): Promise<{ reactions: ReactionSummary[]; changed: boolean } | null> {
    return this.change(input, false);
  }

  private change(input: ReactionInput, add: boolean): Promise<{ reactions: ReactionSummary[]; changed: boolean } | null> {
    checkEpoch(input.epoch);
    if (typeof input.emoji !== 'string' || input.emoji.length === 0) throw new RangeError('emoji must be a non-empty string');
    const at = timestampOrNow(input.at);
    return this.h.serial(input.conversation_id, async () => {
      const conv = await this.conversations.fence(input, input.epoch);
      const message = conv ? await this.messages.inConversation(conv.conversation_id, input.message_id) : null;
      if (!message || message.status === 'DELETED') return null;
      const present = await this.table.has(input.message_id, input.emoji, input.user_id);
      const changed = present !== add;
      if (changed && add) await this.table.add(input.message_id, input.emoji, input.user_id, at);
      if (changed && !add) await this.table.remove(input.message_id, input.emoji, input.user_id);
      if (changed) await this.conversations.bumpRevision(conv!.conversation_id, conv!.revision);
      return { reactions: await this.table.summaries(input.message_id, input.user_id), changed };
    });
  }
}
