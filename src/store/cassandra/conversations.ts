/**
 * The `conversations` table: the truth about each conversation and its fencing row. Every write
 * to it is a lightweight transaction, so Paxos serializes them per conversation:
 *
 *  - create: INSERT ... IF NOT EXISTS (two creates of one id: one wins, the other reads it);
 *  - claim: read epoch E, then `SET epoch = E + 1 IF epoch = E`: two activating actors can never
 *    both get E + 1; the loser re-reads and gets E + 2;
 *  - fencing of a write: `IF epoch <= :mine AND deleted_at = null`, with `SET epoch = :mine`, so
 *    a lower epoch is refused and a higher one adopted;
 *  - seq reservation (append): `SET last_seq = :seq ... IF epoch <= :mine AND last_seq = :read`,
 *    where :read is the last_seq this writer read and :seq > :read. Paxos applies at most one
 *    transition from a given last_seq, so two writers can never both reserve one seq; and the
 *    activity key the append replaces is exactly the one it read (listing.ts deletes it);
 *  - member_count: `IF epoch <= :mine AND member_count = :read`, the same compare-and-set.
 * A lost race (condition false) is classified from the values the LWT answers: deleted or absent
 * (null), epoch above ours (StaleEpochError), or a concurrent writer moved the row (retry).
 *
 * The exception is `revision` (cache validation), a plain write ordered by its own timestamp
 * (nextRevision): bumping it through Paxos would put an LWT on every edit and reaction.
 *
 * What Cassandra cannot give: a fence and a write to ANOTHER table in one transaction. Writes
 * that only touch other tables (edits, reactions, read markers, member rows) check the fence
 * first, then write: a claim landing in between lets that one in-flight write through. Seqs and
 * counts, which live in this row, are exact.
 */
import { StaleEpochError } from '../errors.ts';
import type { ConversationRecord, ConversationStatus, ConversationType } from '../records.ts';
import type { ConversationRef } from '../types-conversations.ts';
import { casLoop, cql, RETRY, type CassandraHandle, type Row } from './cql.ts';
import { num, numOrNull, str, strOrNull, time, timeOrNull } from './rows.ts';

export type ConversationRow = ConversationRecord & { pending_message_id: string | null };

const COLUMNS = [
  'conversation_id', 'tenant_id', 'application_id', 'type', 'visibility', 'name', 'description', 'status', 'created_by_user_id',
  'created_by_client_id', 'last_activity_at', 'created_at', 'updated_at', 'deleted_at', 'member_count', 'last_seq', 'epoch', 'pending_message_id',
  'revision',
] as const;

/**
 * A new row leaves revision unset (read as 0): only nextRevision's plain writes ever set it, so no
 * Paxos ballot timestamp can shadow a bump (see nextRevision).
 */
const INSERTED = COLUMNS.filter((c) => c !== 'revision');
const FENCE = 'epoch <= ? AND deleted_at = null';

export const CONVERSATIONS_CQL = {
  byId: cql(`SELECT ${COLUMNS.join(', ')} FROM conversations WHERE conversation_id = ?`),
  insert: cql(`INSERT INTO conversations (${INSERTED.join(', ')}) VALUES (${INSERTED.map(() => '?').join(', ')}) IF NOT EXISTS`),
  claim: cql('UPDATE conversations SET epoch = ? WHERE conversation_id = ? IF epoch = ? AND deleted_at = null'),
  fence: cql(`UPDATE conversations SET epoch = ? WHERE conversation_id = ? IF ${FENCE}`),
  reserveSeq: cql(`UPDATE conversations SET epoch = ?, last_seq = ?, last_activity_at = ?, pending_message_id = ?
    WHERE conversation_id = ? IF ${FENCE} AND last_seq = ?`),
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
    last_activity_at: time(row, 'last_activity_at'),
    created_at: time(row, 'created_at'),
    updated_at: time(row, 'updated_at'),
    deleted_at: timeOrNull(row, 'deleted_at'),
    member_count: num(row, 'member_count'),
    last_seq: num(row, 'last_seq'),
    epoch: num(row, 'epoch'),
    pending_message_id: strOrNull(row, 'pending_message_id'),
    revision: numOrNull(row, 'revision') ?? 0,
  };
}

/** The port's record (drops the driver-internal column). */
export function publicRecord(row: ConversationRow): ConversationRecord {
  const { pending_message_id: _internal, ...record } = row;
  return record;
}

export function insertParams(row: ConversationRow): unknown[] {
  return INSERTED.map((c) => {
    const v = row[c];
    return c.endsWith('_at') && typeof v === 'string' ? new Date(v) : v;
  });
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

  async claim(ref: ConversationRef): Promise<ConversationRow | null> {
    return casLoop('claim', async () => {
      const row = await this.live(ref);
      if (!row) return null;
      const next = row.epoch + 1;
      const { applied, current } = await this.h.lwt(CONVERSATIONS_CQL.claim, [next, row.conversation_id, row.epoch]);
      if (applied) return Object.assign({}, row, { epoch: next });
      return current.epoch == null || current.deleted_at != null ? null : RETRY;
    });
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
   * Reserves `seq` for `message_id` (append): last_seq moves from the value read in `row` to
   * `seq`, last_activity_at to `activity`. 'moved' when another writer changed last_seq first.
   */
  async reserveSeq(row: ConversationRow, epoch: number, seq: number, activity: string, message_id: string): Promise<'ok' | 'gone' | 'moved'> {
    const { applied, current } = await this.h.lwt(CONVERSATIONS_CQL.reserveSeq, [
      epoch, seq, new Date(activity), message_id, row.conversation_id, epoch, row.last_seq,
    ]);
    return applied ? 'ok' : classify(row.conversation_id, epoch, current);
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
