/**
 * Seq ranges: how a conversation's owner numbers messages without a Paxos round per message.
 *
 * The conversation row's `last_seq` column is the end of the last range of seqs handed out. A
 * writer takes a range (R, E] with one lightweight transaction that moves last_seq from R to E
 * (`IF last_seq = R`, plus its fence): at activation the claim takes the new epoch and the first
 * range together, and when a range runs out the next one is taken (sizes double from `first` up to
 * `max` while the owner keeps sending). Messages inside the range are plain writes.
 *
 * Why two writers never write one seq (docs/storage.md, "Seq ranges"):
 *  1. every range comes from an applied LWT that moved last_seq from the range's start to its
 *     end; Paxos applies LWTs of one partition one after the other, each from the value the
 *     previous one left, so no two ranges overlap;
 *  2. a store writes seq s only under a lease it holds in memory, and a lease exists only after its
 *     LWT answered `applied`; an LWT whose outcome is unknown drops the lease (its range becomes a
 *     gap, never shared);
 *  3. release hands back (high, E] only while last_seq is still E and the epoch unchanged, i.e.
 *     nobody took a range since; the lease is gone before, and seqs up to `high` (issued, written
 *     or not) stay reserved, so a late write of an issued seq can never meet a new owner's.
 * So uniqueness does not depend on clocks, timeouts or epochs. Epochs bound how long a fenced-out
 * owner keeps writing: every append reads the conversation row (LOCAL_QUORUM) before its write and
 * fails with StaleEpochError once a claim with a higher epoch is visible; only appends already past
 * that read can still land, inside the old owner's range, below every seq of the new owner.
 * A crash leaves the unused rest of its range as a gap; history and unread counts count rows,
 * not seqs, so gaps cost nothing but the numbers.
 */
import type { ConversationRef } from '../types-conversations.ts';
import type { ConversationRow, ConversationsTable } from './conversations.ts';
import { casLoop, RETRY } from './cql.ts';

export interface SeqRangeOptions {
  /** Seqs taken by a claim (and the first range of a writer without one); default 16. */
  first?: number;
  /** Largest range: a hot conversation takes an LWT every `max` messages; default 1024. */
  max?: number;
}

/** A range this store holds for a conversation, and where its appends stand in it. */
export interface Lease {
  readonly conversation_id: string;
  readonly epoch: number;
  /** The range ends here (the row's last_seq as this lease last set it). */
  end: number;
  /** The highest seq an append was admitted with (written or not); the base right after a claim. */
  high: number;
  /** The message of `high`, and whether its write failed (a retry of exactly it may write it). */
  highId: string | null;
  highFailed: boolean;
  /** The listing key (activity) the last admitted append moved the conversation to. */
  activity: string;
  /** The next range's size. */
  size: number;
}

export type Admission =
  /** A new seq under the lease: its listing moves from `from` to `to`. */
  | { kind: 'new'; lease: Lease; from: string; to: string }
  /** A seq the lease already issued: the retry of a stored (or failed) message, or a conflict. */
  | { kind: 'taken'; lease: Lease }
  /** No lease of this epoch here: read the row and take a first range. */
  | { kind: 'none' }
  /** The conversation went away while taking the next range. */
  | { kind: 'gone' };

const MAX_LEASES = 100_000;

export class SeqLeases {
  private readonly leases = new Map<string, Lease>();
  readonly first: number;
  readonly max: number;

  constructor(
    private readonly table: ConversationsTable,
    options: SeqRangeOptions = {},
  ) {
    this.first = options.first ?? 16;
    this.max = options.max ?? 1024;
    if (!Number.isSafeInteger(this.first) || this.first < 1 || !Number.isSafeInteger(this.max) || this.max < this.first) {
      throw new RangeError('seq ranges: first must be a positive integer and max at least first');
    }
  }

  /**
   * Activation: the next epoch and the first range, in one LWT. Answers the row as claimed:
   * its `last_seq` is where the new owner numbers from (the end of every earlier range), which may
   * be above the last message when an earlier owner died holding seqs.
   */
  async claim(ref: ConversationRef): Promise<ConversationRow | null> {
    return casLoop('claim', async () => {
      const row = await this.table.live(ref);
      if (!row) return null;
      await this.table.initHead(row);
      const next = row.epoch + 1;
      const end = row.reserved + this.first;
      const outcome = await this.table.claimRange(row, next, end);
      if (outcome !== 'ok') return outcome === 'gone' ? null : RETRY;
      this.hold({ conversation_id: row.conversation_id, epoch: next, end, high: row.reserved, highId: null, highFailed: false, activity: row.last_activity_at, size: this.grow(this.first) });
      return Object.assign({}, row, { epoch: next, last_seq: row.reserved });
    });
  }

  /**
   * Admits append `seq` under this store's lease of `epoch`, taking the next range when it ran
   * out. Runs in the conversation's append order (CassandraHandle.pipelined).
   */
  async admit(conversation_id: string, epoch: number, seq: number, message_id: string, at: string): Promise<Admission> {
    const lease = this.leases.get(conversation_id);
    if (lease === undefined || lease.epoch !== epoch) return { kind: 'none' };
    if (seq <= lease.high) return { kind: 'taken', lease };
    if (seq > lease.end) {
      const end = seq - 1 + lease.size;
      let outcome: 'ok' | 'gone' | 'moved';
      try {
        outcome = await this.table.reserve(conversation_id, epoch, lease.end, end);
      } catch (error) {
        // Fenced (StaleEpochError), or an outcome we cannot know: the range is not ours to use.
        this.drop(lease);
        throw error;
      }
      if (outcome !== 'ok') {
        this.drop(lease);
        return outcome === 'gone' ? { kind: 'gone' } : { kind: 'none' };
      }
      lease.end = end;
      lease.size = this.grow(lease.size);
    }
    return { kind: 'new', lease, ...this.issue(lease, seq, message_id, at) };
  }

  /**
   * The first range of a writer without a lease of this epoch (it presented an epoch it did not
   * claim here): from the row's reserved end, which `seq` must be above.
   */
  async reserveFirst(row: ConversationRow, epoch: number, seq: number, message_id: string, at: string): Promise<{ lease: Lease; from: string; to: string } | 'gone' | 'moved'> {
    await this.table.initHead(row);
    const end = seq - 1 + this.first;
    const outcome = await this.table.reserve(row.conversation_id, epoch, row.reserved, end);
    if (outcome !== 'ok') return outcome;
    const lease: Lease = { conversation_id: row.conversation_id, epoch, end, high: row.reserved, highId: null, highFailed: false, activity: row.last_activity_at, size: this.grow(this.first) };
    this.hold(lease);
    return { lease, ...this.issue(lease, seq, message_id, at) };
  }

  /** The write of `seq` failed: a retry of exactly that message may write it again. */
  failed(lease: Lease, seq: number): void {
    if (lease.high === seq) lease.highFailed = true;
  }

  /** Forgets the lease (fenced, or its range is in doubt); its unused seqs become a gap. */
  drop(lease: Lease): void {
    if (this.leases.get(lease.conversation_id) === lease) this.leases.delete(lease.conversation_id);
  }

  /**
   * The owner lets go (passivation): forget the lease, then hand the seqs it never issued back,
   * so the next owner continues without a gap. Only while nobody reserved after us (LWT).
   */
  async release(conversation_id: string, epoch: number): Promise<void> {
    const lease = this.leases.get(conversation_id);
    if (lease === undefined || lease.epoch !== epoch) return;
    this.leases.delete(conversation_id);
    if (lease.high < lease.end) await this.table.release(conversation_id, epoch, lease.end, lease.high);
  }

  /** Leases held (tests, metrics). */
  get size(): number {
    return this.leases.size;
  }

  private issue(lease: Lease, seq: number, message_id: string, at: string): { from: string; to: string } {
    const from = lease.activity;
    const to = at > from ? at : from;
    lease.high = seq;
    lease.highId = message_id;
    lease.highFailed = false;
    lease.activity = to;
    return { from, to };
  }

  private hold(lease: Lease): void {
    this.leases.delete(lease.conversation_id);
    this.leases.set(lease.conversation_id, lease);
    // Bounded: a lease dropped here only costs its owner's next append a read and an LWT.
    if (this.leases.size > MAX_LEASES) this.leases.delete(this.leases.keys().next().value!);
  }

  private grow(size: number): number {
    return Math.min(size * 2, this.max);
  }
}
