/**
 * The MessageStore of the Cassandra driver. Writes to one conversation run through its write
 * queue (cql.ts `serial`), so one caller's unawaited writes apply in call order.
 *
 * append, step by step:
 *  1. read the conversation and message_by_id (in parallel, LOCAL_QUORUM). Conversation absent,
 *     deleted or foreign: null; epoch above ours: StaleEpochError;
 *  2. the id in another conversation is IdConflictError; in this one it is a retry, answered
 *     with the stored message (`created: false`);
 *  3. seq <= last_seq: SeqConflictError, unless the conversation's pending_message_id is this
 *     message (a previous attempt reserved the seq, then died before writing the message: finish
 *     it now, see 5);
 *  4. reserve the seq with one LWT on the conversation row: last_seq := seq, last_activity_at :=
 *     max(stored, at), pending_message_id := message_id, IF epoch <= ours AND last_seq = the value
 *     read. Not applied: re-classify (gone: null, fenced: StaleEpochError, moved: start over);
 *  5. one logged batch: the message row, its id lookup, its retention entries and the listing
 *     move (activity.ts). The batchlog applies it entirely once accepted.
 * Consequently a seq is reserved by at most one writer (Paxos), and a message row is written
 * only by the writer that reserved its seq. Unlike SQLite, a seq below last_seq is refused even if
 * no message holds it: the actor numbers last_seq + 1, so a lower seq means its view is stale.
 */
import { IdConflictError, SeqConflictError, StaleEpochError } from '../errors.ts';
import type { MessageRecord, MessageView, Page } from '../records.ts';
import { pageLimit, timestampOrNow, type MessagePosition } from '../positions.ts';
import type { ConversationRef } from '../types-conversations.ts';
import type { AppendMessageInput, ListMessagesQuery, MessageStore, MessageWrite, RetentionInput } from '../types-messages.ts';
import { indexRows, moveRows } from './activity.ts';
import { historyStart } from './buckets.ts';
import type { ConversationRow, ConversationsTable } from './conversations.ts';
import { casLoop, RETRY, type CassandraHandle } from './cql.ts';
import type { MessagesTable } from './messages.ts';
import type { CassandraProfileStore } from './profiles.ts';
import type { ReactionsTable } from './reactions.ts';
import { dayOf } from './rows.ts';
import { checkEpoch } from './validate.ts';
import { checkAppend, checkRetention, newMessageRecord } from '../inputs.ts';


export class CassandraMessageStore implements MessageStore {
  constructor(
    private readonly h: CassandraHandle,
    private readonly conversations: ConversationsTable,
    private readonly table: MessagesTable,
    private readonly reactions: ReactionsTable,
    private readonly profiles: CassandraProfileStore,
  ) {}

  async append(input: AppendMessageInput): Promise<{ message: MessageRecord; created: boolean } | null> {
    const at = checkAppend(input);
    return this.h.serial(input.conversation_id, () =>
      casLoop('append', async () => {
        // Both reads at once: they are independent, and this is the hot write path.
        const [conv, where] = await Promise.all([this.conversations.live(input), this.table.locate(input.message_id)]);
        if (!conv) return null;
        if (input.epoch < conv.epoch) throw new StaleEpochError(conv.conversation_id, input.epoch, conv.epoch);
        if (where && where.conversation_id !== conv.conversation_id) throw new IdConflictError('message', input.message_id);
        const message = newMessageRecord(input, at);
        if (where) return { message: (await this.table.bySeq(conv.conversation_id, where.seq)) ?? message, created: false };
        if (input.seq <= conv.last_seq) {
          const mine = conv.pending_message_id === input.message_id && conv.last_seq === input.seq;
          if (!mine) throw new SeqConflictError(conv.conversation_id, input.seq);
          // The reservation's listing move may be lost too: (re)index the current key.
          await this.h.batch([...this.table.insertRows(message), ...indexRows(conv, conv.last_activity_at)]);
          await this.conversations.bumpRevision(conv.conversation_id, conv.revision);
          return { message, created: true };
        }
        const activity = at > conv.last_activity_at ? at : conv.last_activity_at;
        const reserved = await this.conversations.reserveSeq(conv, input.epoch, input.seq, activity, input.message_id);
        if (reserved !== 'ok') return reserved === 'gone' ? null : RETRY;
        const move = activity === conv.last_activity_at ? [] : moveRows(conv, conv, conv.last_activity_at, activity);
        await this.h.batch([...this.table.insertRows(message), ...move]);
        await this.conversations.bumpRevision(conv.conversation_id, conv.revision);
        return { message, created: true };
      }),
    );
  }

  async edit(input: MessageWrite & { body: string; mentioned_user_ids?: string[] }): Promise<MessageRecord | null> {
    checkEpoch(input.epoch);
    const at = timestampOrNow(input.at);
    return this.h.serial(input.conversation_id, async () => {
      const { conv, m } = await this.fencedMessage(input);
      if (!conv || !m || m.status === 'DELETED') return m;
      const edited = await this.table.edit(m, input.body, input.mentioned_user_ids, at);
      await this.conversations.bumpRevision(conv.conversation_id, conv.revision);
      return edited;
    });
  }

  async tombstone(input: MessageWrite): Promise<MessageRecord | null> {
    checkEpoch(input.epoch);
    const at = timestampOrNow(input.at);
    return this.h.serial(input.conversation_id, async () => {
      const { conv, m } = await this.fencedMessage(input);
      if (!conv || !m || m.status === 'DELETED') return m;
      const dead = await this.table.tombstone(m, at);
      await this.h.batch([this.reactions.clearRow(m.message_id)]);
      await this.conversations.bumpRevision(conv.conversation_id, conv.revision);
      return dead;
    });
  }

  async get(ref: ConversationRef, message_id: string, viewer_user_id: string | null): Promise<MessageView | null> {
    return this.h.op(async () => {
      const conv = await this.conversations.live(ref);
      const m = conv ? await this.table.inConversation(conv.conversation_id, message_id) : null;
      return m ? (await this.views(ref.tenant_id, [m], viewer_user_id))[0]! : null;
    });
  }

  async list(query: ListMessagesQuery): Promise<Page<MessageView, MessagePosition> | null> {
    const limit = pageLimit(query.limit);
    return this.h.op(async () => {
      const conv = await this.conversations.live(query);
      if (!conv) return null;
      const start = historyStart(query.after, conv.last_seq);
      const rows = await this.table.newestFirst(conv.conversation_id, start, limit + 1);
      const items = await this.views(query.tenant_id, rows.slice(0, limit), query.viewer_user_id);
      const last = items[items.length - 1];
      return { items, next: rows.length > limit && last ? { seq: last.seq } : null };
    });
  }

  async deleteExpired(input: RetentionInput): Promise<number> {
    const { batch, cutoff } = checkRetention(input);
    return this.h.op(async () => {
      let total = 0;
      for (const day of await this.table.days(input.tenant_id, dayOf(cutoff))) {
        for (;;) {
          const entries = await this.table.expiring(input.tenant_id, day, cutoff, batch);
          // One logged batch per message (its partitions differ), the batch's messages in parallel.
          const deleted = await Promise.all(
            entries.map(async (e) => {
              const exists = (await this.table.locate(e.message_id)) !== null;
              await this.h.batch([...this.table.deleteRows(input.tenant_id, e), this.reactions.clearRow(e.message_id)]);
              return exists ? 1 : 0;
            }),
          );
          total += deleted.reduce<number>((a, b) => a + b, 0);
          // Cached pages of these conversations showed the deleted messages.
          await Promise.all(
            [...new Set(entries.map((e) => e.conversation_id))].map(async (id) => {
              const conv = await this.conversations.byId(id);
              if (conv) await this.conversations.bumpRevision(id, conv.revision);
            }),
          );
          if (entries.length < batch) break;
        }
        // A day entirely before the cutoff is now empty: forget it.
        if (day < dayOf(cutoff)) await this.table.dropDay(input.tenant_id, day);
      }
      return total;
    });
  }

  private async fencedMessage(input: MessageWrite): Promise<{ conv: ConversationRow | null; m: MessageRecord | null }> {
    const conv = await this.conversations.fence(input, input.epoch);
    return { conv, m: conv ? await this.table.inConversation(conv.conversation_id, input.message_id) : null };
  }

  private async views(tenant_id: string, messages: readonly MessageRecord[], viewer: string | null): Promise<MessageView[]> {
    const senders = messages.flatMap((m) => (m.sender_user_id === null ? [] : [m.sender_user_id]));
    const [reactions, profiles] = await Promise.all([
      this.reactions.summariesOf(messages.map((m) => m.message_id), viewer),
      this.profiles.read(tenant_id, senders),
    ]);
    const byUser = new Map(profiles.map((p) => [p.user_id, p]));
    return messages.map((m) => {
      const p = m.sender_user_id === null ? null : byUser.get(m.sender_user_id);
      const sender = m.sender_user_id === null ? null : { user_id: m.sender_user_id, display_name: p?.display_name ?? null, avatar_url: p?.avatar_url ?? null };
      return { reactions: reactions.get(m.message_id) ?? [], sender, ...m };
    });
  }
}
