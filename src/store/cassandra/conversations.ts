/**
 * The `conversations` table: the truth about each conversation and its fencing row. Its
 * conditioned columns (epoch, last_seq, member_count, deleted_at, ...) are only ever written by
 * lightweight transactions, so Paxos serializes them per conversation:
 *
 *  - create: INSERT ... IF NOT EXISTS (two creates of one id: one wins, the other reads it);
 *  - claim: read epoch E and last_seq R, then `SET epoch = E + 1, last_seq = R + n IF epoch = E
 *    AND last_seq = R`: two activating actors can never both get E + 1, and the winner holds the
 *    seqs R + 1 .. R + n (seq-leases.ts);
 *  - seq ranges: `last_seq` is the end of the last range of seqs handed out, NOT the last message.
 *    A writer takes a range with `SET epoch = :mine, last_seq = :end IF epoch <= :mine AND
 *    last_seq = :read`; Paxos applies at most one transition from a given last_seq, so ranges
 *    never overlap, and messages are then written without Paxos (seq-leases.ts, message-store.ts);
 *  - fencing of a write: `IF epoch <= :mine AND deleted_at = null`, with `SET epoch = :mine`, so
 *    a lower epoch is refused and a higher one adopted;
 *  - member_count: `IF epoch <= :mine AND member_count = :read`, a compare-and-set.
 * A lost race (condition false) is classified from the values the LWT answers: deleted or absent
 * (null), epoch above ours (StaleEpochError), or a concurrent writer moved the row (retry).
 *
 * Three columns are written without Paxos, each with USING TIMESTAMP so that last-write-wins
 * keeps the highest value whatever order the writes arrive in, and none is ever conditioned on
 * or written by an LWT (a Paxos ballot's timestamp would shadow them):
 *  - `head_seq`, `head_activity_at`: the highest seq written and the activity it set, written in
 *    each message's batch with timestamp = seq. The record's `last_seq` is head_seq (last_seq on
 *    a row no range was taken on yet); its `last_activity_at` the later of the creation's and
 *    head_activity_at;
 *  - `revision` (cache validation, nextRevision), timestamp = value.
 *
 * What Cassandra cannot give: a fence and a write to ANOTHER table in one transaction. Writes
 * that only touch other tables (messages, edits, reactions, read markers, member rows) check the
 * fence first, then write: a claim landing in between lets the writes in flight through. Seqs
 * are exact regardless (ranges); counts, which live in this row, too.
 */
import { StaleEpochError } from '../errors.ts';
import type { ConversationRecord, ConversationStatus, ConversationType } from '../records.ts';
import type { ConversationRef } from '../types-conversations.ts';
import type { Mutation } from './activity.ts';
import { casLoop, cql, RETRY, type CassandraHandle, type Row } from './cql.ts';
import { num, numOrNull, str, strOrNull, time, timeOrNull } from './rows.ts';

/**
 * The record (last_seq: the last message written) plus what only the driver sees: `reserved`, the
 * end of the last seq range handed out (the column last_seq), and whether the head columns were
 * ever written.
 */
export type ConversationRow = ConversationRecord & { reserved: number; head_set: boolean };

/** The columns an insert writes (the LWT that creates the row). */
const INSERTED = [
  'conversation_id', 'tenant_id', 'application_id', 'type', 'visibility', 'name', 'description', 'status', 'created_by_user_id',
  'created_by_client_id', 'last_activity_at', 'created_at', 'updated_at', 'deleted_at', 'member_count', 'last_seq', 'epoch',
] as const;
/**
 * A new row leaves the plain-written columns unset (head_seq, head_activity_at, revision): only
 * their own USING TIMESTAMP writes ever set them, so no Paxos ballot timestamp can shadow them.
 */
const COLUMNS = [...INSERTED, 'head_seq', 'head_activity_at', 'revision'] as const;
const FENCE = 'epoch <= ? AND deleted_at = null';

export const CONVERSATIONS_CQL = {
  byId: cql(`SELECT ${COLUMNS.join(', ')} FROM conversations WHERE conversation_id = ?`),
  insert: cql(`INSERT INTO conversations (${INSERTED.join(', ')}) VALUES (${INSERTED.map(() => '?').join(', ')}) IF NOT EXISTS`),
  /** A new epoch and the first seq range of its holder. */
  claim: cql('UPDATE conversations SET epoch = ?, last_seq = ? WHERE conversation_id = ? IF epoch = ? AND deleted_at = null AND last_seq = ?'),
  fence: cql(`UPDATE conversations SET epoch = ? WHERE conversation_id = ? IF ${FENCE}`),
  /** A seq range (the first of a writer without a claim, or the next one of a lease). */
  reserve: cql(`UPDATE conversations SET epoch = ?, last_seq = ? WHERE conversation_id = ? IF ${FENCE} AND last_seq = ?`),
  /** Hands the unused end of a range back, only while nobody reserved after it. */
  release: cql('UPDATE conversations SET last_seq = ? WHERE conversation_id = ? IF epoch = ? AND last_seq = ?'),
  /** The last message written and its activity, last-write-wins by seq (USING TIMESTAMP seq). */
  head: cql('UPDATE conversations USING TIMESTAMP ? SET head_seq = ?, head_activity_at = ? WHERE conversation_id = ?'),
  memberCount: cql(`UPDATE conversations SET epoch = ?, member_count = ? WHERE conversation_id = ? IF ${FENCE} AND member_count = ?`),
  update: cql(`UPDATE conversations SET epoch = ?, name = ?, description = ?, visibility = ?, status = ?, updated_at = ?
    WHERE conversation_id = ? IF ${FENCE}`),
  softDelete: cql(`UPDATE conversations SET epoch = ?, deleted_at = ?, updated_at = ? WHERE conversation_id = ? IF ${FENCE}`),
  /** The one plain write of this row (see nextRevision). */
  revision: cql('UPDATE conversations USING TIMESTAMP ? SET revision = ? WHERE conversation_id = ?'),
};

/**
 * The next revision after `read`: above it, and at least the clock in microseconds. Written with
 * USING TIMESTAMP equal to the value, so last-write-wins keeps the highest revision ever written:
 * it never comes back to an earlier value, whatever order bumps arrive in. Its column is the only
 * one of the row written without Paxos, and no LWT conditions on it.
 */
export function nextRevision(read: number, nowMs: number = Date.now()): number {
  return Math.max(read + 1, nowMs * 1000);
}

export function toConversation(row: Row): ConversationRow {
  const reserved = num(row, 'last_seq');
  const head = numOrNull(row, 'head_seq');
  const created = time(row, 'last_activity_at');
  const moved = timeOrNull(row, 'head_activity_at');
  return {
    conversation_id: str(row, 'conversation_id'),
    tenant_id: str(row, 'tenant_id'),
    application_id: str(row, 'application_id'),
    type: str(row, 'type') as ConversationType,
    visibility: strOrNull(row, 'visibility'),
    name: strOrNull(row, 'name'),
    description: strOrNull(row, 'description'),
    status: str(row, 'status') as ConversationStatus,
    created_by_user_id: strOrNull(row, 'created_by_user_id'),
    created_by_client_id: strOrNull(row, 'created_by_client_id'),
    last_activity_at: moved !== null && moved > created ? moved : created,
    created_at: time(row, 'created_at'),
    updated_at: time(row, 'updated_at'),
    deleted_at: timeOrNull(row, 'deleted_at'),
    member_count: num(row, 'member_count'),
    // No head yet: no range was ever taken on this row, so every reserved seq was written (0 on a
    // new row; rows of the build before seq ranges reserved one seq per message).
    last_seq: head ?? reserved,
    epoch: num(row, 'epoch'),
    revision: numOrNull(row, 'revision') ?? 0,
    reserved,
    head_set: head !== null,
  };
}

/** The port's record (drops the driver-internal columns). */
export function publicRecord(row: ConversationRow): ConversationRecord {
  const { reserved: _reserved, head_set: _head, ...record } = row;
  return record;
}

/** A new conversation's row: nothing reserved, no head. */
export function newRow(record: ConversationRecord): ConversationRow {
  return Object.assign({}, record, { reserved: record.last_seq, head_set: false });
}

export function insertParams(row: ConversationRow): unknown[] {
  return INSERTED.map((c) => {
    const v = c === 'last_seq' ? row.reserved : row[c];
    return c.endsWith('_at') && typeof v === 'string' ? new Date(v) : v;
  });
}

/** The head write of message `seq` (in the message's batch): LWW by seq. */
export function headRow(conversation_id: string, seq: number, activity: string): Mutation {
  return [CONVERSATIONS_CQL.head, [seq, seq, new Date(activity), conversation_id]];
}

/** Why an LWT on the row was not applied: absent/deleted, fenced out, or moved under us. */
export function classify(conversation_id: string, epoch: number, current: Row): 'gone' | 'moved' {
  if (current.epoch === undefined || current.epoch === null || (current.deleted_at !== null && current.deleted_at !== undefined)) return 'gone';
  const stored = numOrNull(current, 'epoch') ?? 0;
  if (stored > epoch) throw new StaleEpochError(conversation_id, epoch, stored);
  return 'moved';
}

export class ConversationsTable {
  constructor(private readonly h: CassandraHandle) {}

  /** Any conversation with this id, in any context, deleted or not. */
  async byId(conversation_id: string): Promise<ConversationRow | null> {
    const row = await this.h.row(CONVERSATIONS_CQL.byId, [conversation_id]);
    return row && row.tenant_id != null ? toConversation(row) : null;
  }

  /** The conversation if it exists in this context and is not deleted. */
  async live(ref: ConversationRef): Promise<ConversationRow | null> {
    const row = await this.byId(ref.conversation_id);
    const ok = row && row.deleted_at === null && row.tenant_id === ref.tenant_id && row.application_id === ref.application_id;
    return ok ? row : null;
  }

  /** Inserts unless the id exists; false when another create got there first. */
  async insert(row: ConversationRow): Promise<boolean> {
    return (await this.h.lwt(CONVERSATIONS_CQL.insert, insertParams(row))).applied;
  }

  /**
   * The fencing rule for a write that does not otherwise change this row: null when absent,
   * deleted or of another context; StaleEpochError below the stored epoch; a higher epoch is
   * stored first (an LWT), so the writer that presented it fences older ones from then on.
   */
  async fence(ref: ConversationRef, epoch: number): Promise<ConversationRow | null> {
    return casLoop('fence', async () => {
      const row = await this.live(ref);
      if (!row) return null;
      if (epoch < row.epoch) throw new StaleEpochError(row.conversation_id, epoch, row.epoch);
      if (epoch === row.epoch) return row;
      const { applied, current } = await this.h.lwt(CONVERSATIONS_CQL.fence, [epoch, row.conversation_id, epoch]);
      if (applied) return Object.assign({}, row, { epoch });
      return classify(row.conversation_id, epoch, current) === 'gone' ? null : RETRY;
    });
  }

  /**
   * Moves the revision after a write a history page shows (a message sent, edited, deleted or
   * expired, a reaction changed). Called AFTER that write completed: a reader that fetched the new
   * revision then reads the changed rows, so it can never cache old content under a new revision.
   */
  async bumpRevision(conversation_id: string, read: number): Promise<number> {
    const next = nextRevision(read);
    await this.h.rows(CONVERSATIONS_CQL.revision, [next, next, conversation_id]);
    return next;
  }

  /**
   * Before the first range is taken on a row without a head (a new row, or one of the build
   * before seq ranges), the head is set to what the row holds, so that the record's last_seq
   * stays the last message once last_seq means "reserved". Idempotent (same value, same
   * timestamp); a head written since by a message (a higher seq) wins over it.
   */
  async initHead(row: ConversationRow): Promise<void> {
    if (row.head_set) return;
    const [stmt, params] = headRow(row.conversation_id, row.reserved, row.last_activity_at);
    await this.h.rows(stmt, params);
  }

  /** `SET epoch = next, last_seq = end IF epoch = row.epoch AND last_seq = row.reserved`. */
  async claimRange(row: ConversationRow, next: number, end: number): Promise<'ok' | 'gone' | 'moved'> {
    const { applied, current } = await this.h.lwt(CONVERSATIONS_CQL.claim, [next, end, row.conversation_id, row.epoch, row.reserved]);
    if (applied) return 'ok';
    return current.epoch == null || current.deleted_at != null ? 'gone' : 'moved';
  }

  /** `SET epoch = mine, last_seq = end IF epoch <= mine AND deleted_at = null AND last_seq = from`. */
  async reserve(conversation_id: string, epoch: number, from: number, end: number): Promise<'ok' | 'gone' | 'moved'> {
    const { applied, current } = await this.h.lwt(CONVERSATIONS_CQL.reserve, [epoch, end, conversation_id, epoch, from]);
    return applied ? 'ok' : classify(conversation_id, epoch, current);
  }

  /** `SET last_seq = to IF epoch = mine AND last_seq = end`; false when someone moved on. */
  async release(conversation_id: string, epoch: number, end: number, to: number): Promise<boolean> {
    return (await this.h.lwt(CONVERSATIONS_CQL.release, [to, conversation_id, epoch, end])).applied;
  }

  /**
   * Compare-and-set of member_count from the value read in `row` (fenced). 'gone' when the
   * conversation went away, 'moved' when another writer changed the count first (re-read).
   */
  async setMemberCount(row: ConversationRow, epoch: number, count: number): Promise<'ok' | 'gone' | 'moved'> {
    const { applied, current } = await this.h.lwt(CONVERSATIONS_CQL.memberCount, [epoch, count, row.conversation_id, epoch, row.member_count]);
    return applied ? 'ok' : classify(row.conversation_id, epoch, current);
  }
}
