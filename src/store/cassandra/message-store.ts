/**
 * The MessageStore of the Cassandra driver. Writes to one conversation run through its write
 * queue (cql.ts `serial`), so one caller's unawaited writes apply in call order; appends use the
 * queue's pipelined lane: admitted in call order, written concurrently, and every other write of
 * the conversation waits for them.
 *
 * append, step by step (no Paxos round per message; seq-leases.ts says why seqs stay unique):
 *  1. admission, in call order: under this store's lease of the append's epoch, a seq above the
 *     lease's highest is issued (taking the next range with one LWT when the lease ran out), and
 *     the listing key moves to max(previous key, at). A seq the lease already issued is a retry
 *     or a conflict (3). Without a lease of that epoch: the slow path (4);
 *  2. read the conversation and message_by_id (in parallel, LOCAL_QUORUM). Conversation absent,
 *     deleted or foreign: null; epoch above ours: StaleEpochError (the fence: a claim that
 *     completed before this read stops the write); the id in another conversation:
 *     IdConflictError; in this one: a retry, answered with the stored message (`created: false`);
 *     then one logged batch: the message row, its id lookup, its retention entries, the head
 *     (last seq and activity, last-write-wins by seq) and the listing move; then the revision;
 *  3. a seq at or below the lease's highest that no message holds is SeqConflictError, unless it is
 *     the highest and its write failed and this is the same message (its retry writes it);
 *  4. slow path (a writer that did not claim here, e.g. an epoch from outside): read the row;
 *     seq <= the reserved end is SeqConflictError (some writer holds it); else take the range
 *     from there with one LWT and write as in 2. The next appends wait for it (admission).
 *  5. an id sent under an Idempotency-Key (`retryable_id`): in 2-4 the id is bound to its seq and
 *     created_at with an LWT (INSERT IF NOT EXISTS into message_by_id) instead of read, before
 *     any row is written. A write timeout is ambiguous on Cassandra: the first try's logged batch
 *     may land after its retry looked. The retry's bind answers the first try's seq and time; if
 *     that row is not there yet, the retry writes the identical rows there (USING TIMESTAMP of
 *     created_at), its own seq stays a gap, and both landings converge on one row. Unkeyed sends
 *     keep the plain read: only keyed ones pay the Paxos round.
 * Unlike SQLite, a seq no message holds can be refused: the actor numbers from its claim, so a
 * seq below what it was handed means a stale view.
 */
import { IdConflictError, SeqConflictError, StaleEpochError } from '../errors.ts';
import type { MessageRecord, MessageView, Page } from '../records.ts';
import { pageLimit, timestampOrNow, type MessagePosition } from '../positions.ts';
import type { ConversationRef } from '../types-conversations.ts';
import type { AppendMessageInput, ListMessagesQuery, MessageStore, MessageWrite, RetentionInput } from '../types-messages.ts';
import { indexRows, moveRows, type Mutation } from './activity.ts';
import { historyStart } from './buckets.ts';
import { headRow, type ConversationRow, type ConversationsTable } from './conversations.ts';
import { casLoop, RETRY, type CassandraHandle } from './cql.ts';
import type { Binding, ExpiringEntry, MessagesTable } from './messages.ts';
import type { CassandraProfileStore } from './profiles.ts';
import type { ReactionsTable } from './reactions.ts';
import { dayOf } from './rows.ts';
import type { Admission, Lease, SeqLeases } from './seq-leases.ts';
import { checkEpoch } from './validate.ts';
import { checkAppend, checkRetention, newMessageRecord } from '../inputs.ts';

type Appended = { message: MessageRecord; created: boolean } | null;
/** What check() found: the conversation and the message to write (at an earlier try's seq: rebound). */
type Checked = { conv: ConversationRow; message: MessageRecord; rebound: boolean };
/** An admission, or the slow path's whole answer. */
type Admitted = Exclude<Admission, { kind: 'none' }> | { kind: 'done'; result: Appended };

export class CassandraMessageStore implements MessageStore {
  constructor(
    private readonly h: CassandraHandle,
    private readonly conversations: ConversationsTable,
    private readonly table: MessagesTable,
    private readonly reactions: ReactionsTable,
    private readonly profiles: CassandraProfileStore,
    private readonly leases: SeqLeases,
  ) {}

  async append(input: AppendMessageInput): Promise<Appended> {
    const at = checkAppend(input);
    return this.h.pipelined(
      input.conversation_id,
      async (): Promise<Admitted> => {
        const admitted = await this.leases.admit(input.conversation_id, input.epoch, input.seq, input.message_id, at);
        return admitted.kind === 'none' ? { kind: 'done', result: await this.firstRange(input, at) } : admitted;
      },
      async (a): Promise<Appended> => {
        if (a.kind === 'done') return a.result;
        if (a.kind === 'gone') return null;
        try {
          return a.kind === 'new' ? await this.write(input, at, a.from, a.to) : await this.again(input, at, a.lease);
        } catch (error) {
          if (error instanceof StaleEpochError) this.leases.drop(a.lease);
          else if (a.kind === 'new') this.leases.failed(a.lease, input.seq);
          throw error;
        }
      },
    );
  }

  /**
   * The conversation and where the message id lives, read together: null, a stored answer, or
   * the message to write. With `bind` (an id sent under an Idempotency-Key, `retryable_id`, whose
   * seq is this store's to write) the id is bound to its seq and created_at by an LWT instead of
   * read (step 5). A binding an earlier try made, whose row is not there (yet), makes the message
   * to write that try's, at its seq (`rebound`).
   */
  private async check(input: AppendMessageInput, at: string, bind: boolean): Promise<Checked | { done: Appended }> {
    const message = newMessageRecord(input, at);
    // The bind waits for the fence check: a writer fenced out (or a conversation gone) must not
    // bind, or the retry would be sent back to the seq of an owner that never writes it (a gap
    // where a clean handover leaves none).
    const [conv, located] = await Promise.all([this.conversations.live(input), bind ? null : this.table.locate(input.message_id)]);
    if (!conv) return { done: null };
    if (input.epoch < conv.epoch) throw new StaleEpochError(conv.conversation_id, input.epoch, conv.epoch);
    const where = bind ? await this.table.bind(message) : located;
    if (!where) return { conv, message, rebound: false };
    return this.boundBefore(conv, message, where, bind);
  }

  /** The id was found bound (or, read, stored): this bind itself, the stored answer, or a rebound write. */
  private async boundBefore(conv: ConversationRow, message: MessageRecord, where: Binding, bound: boolean): Promise<Checked | { done: Appended }> {
    if (where.conversation_id !== conv.conversation_id) throw new IdConflictError('message', message.message_id);
    if (bound && where.seq === message.seq && (where.created_at === null || where.created_at === message.created_at)) return { conv, message, rebound: false };
    const stored = await this.table.bySeq(conv.conversation_id, where.seq);
    if (stored && stored.message_id !== message.message_id) throw new SeqConflictError(conv.conversation_id, where.seq);
    // Read, not bound: a binding with a time was made by a keyed try (an unkeyed write has none).
    const keyed = bound || where.created_at !== null;
    if (stored || !keyed) return { done: { message: stored ?? message, created: false } };
    // Bound by an earlier try whose rows are not there: its batch failed, or is still on its way
    // (a write timeout is no proof it will not land). Write the same rows it writes.
    const created_at = where.created_at ?? message.created_at;
    const { seq: _seq, created_at: _created, updated_at: _updated, ...rest } = message;
    return { conv, message: { seq: where.seq, created_at, updated_at: created_at, ...rest }, rebound: true };
  }

  /**
   * The rows of a message an earlier try bound (step 5), beside that try's own batch if it lands:
   * identical message rows at the same timestamp; the head at its seq (a later message's head
   * wins); the listing key of the activity the conversation has if this is its newest message.
   * Nothing is unindexed: a key left behind is a hint readers drop (docs/storage.md).
   */
  private async rebind(conv: ConversationRow, message: MessageRecord): Promise<Appended> {
    const activity = message.created_at > conv.last_activity_at ? message.created_at : conv.last_activity_at;
    await this.h.batch([...this.table.insertRows(message, true), headRow(conv.conversation_id, message.seq, activity), ...indexRows(conv, activity)]);
    await this.conversations.bumpRevision(conv.conversation_id, conv.revision);
    return { message, created: true };
  }

  /** A seq issued under the lease (step 2): this store's to write, so a keyed id is bound to it. */
  private async write(input: AppendMessageInput, at: string, from: string, to: string): Promise<Appended> {
    const bound = input.retryable_id === true;
    const checked = await this.check(input, at, bound);
    if ('done' in checked) return checked.done;
    const { conv, message, rebound } = checked;
    if (rebound) return this.rebind(conv, message);
    const move = from === to ? [] : moveRows(conv, conv, from, to);
    await this.h.batch([...this.table.insertRows(message, bound), headRow(conv.conversation_id, message.seq, to), ...move]);
    await this.conversations.bumpRevision(conv.conversation_id, conv.revision);
    return { message, created: true };
  }

  /**
   * A seq the lease issued before (step 3). Only the retry of exactly the message whose write
   * failed may write it, so only then is a keyed id bound to it (a conflicting seq bound to an
   * id would send that id's retries to another message's row).
   */
  private async again(input: AppendMessageInput, at: string, lease: Lease): Promise<Appended> {
    const retry = lease.high === input.seq && lease.highId === input.message_id && lease.highFailed;
    const bound = retry && input.retryable_id === true;
    const checked = await this.check(input, at, bound);
    if ('done' in checked) return checked.done;
    const { conv, message, rebound } = checked;
    if (rebound) return this.rebind(conv, message);
    if (!retry) throw new SeqConflictError(conv.conversation_id, input.seq);
    lease.highFailed = false;
    // Its listing move may be lost too: (re)index the key it moved to (nothing was admitted since).
    await this.h.batch([...this.table.insertRows(message, bound), headRow(conv.conversation_id, message.seq, lease.activity), ...indexRows(conv, lease.activity)]);
    await this.conversations.bumpRevision(conv.conversation_id, conv.revision);
    return { message, created: true };
  }

  /** No lease of this epoch here (step 4): the first range, then (a keyed id bound to its seq) the write. */
  private async firstRange(input: AppendMessageInput, at: string): Promise<Appended> {
    return casLoop('append', async () => {
      const checked = await this.check(input, at, false);
      if ('done' in checked) return checked.done;
      const { conv, rebound } = checked;
      // Its seq is the earlier try's, reserved already: no range needed.
      if (rebound) return this.rebind(conv, checked.message);
      if (input.seq <= conv.reserved) throw new SeqConflictError(conv.conversation_id, input.seq);
      const taken = await this.leases.reserveFirst(conv, input.epoch, input.seq, input.message_id, at);
      if (taken === 'gone') return null;
      if (taken === 'moved') return RETRY;
      try {
        const bound = input.retryable_id === true;
        let message = checked.message;
        if (bound) {
          const after = await this.boundBefore(conv, message, await this.table.bind(message), true);
          if ('done' in after) return after.done;
          if (after.rebound) return await this.rebind(conv, after.message);
          message = after.message;
        }
        const move = taken.from === taken.to ? [] : moveRows(conv, conv, taken.from, taken.to);
        await this.h.batch([...this.table.insertRows(message, bound), headRow(conv.conversation_id, message.seq, taken.to), ...move]);
        await this.conversations.bumpRevision(conv.conversation_id, conv.revision);
        return { message, created: true };
      } catch (error) {
        this.leases.failed(taken.lease, input.seq);
        throw error;
      }
    });
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
        // Keyset over the day's entries: each slice starts after the last one the previous took,
        // never over the tombstones this pass just wrote (messages.ts daySliceAfter).
        let after: ExpiringEntry | null = null;
        for (;;) {
          const entries: ExpiringEntry[] = await this.table.expiring(input.tenant_id, day, cutoff, batch, after);
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
          after = entries[entries.length - 1]!;
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
