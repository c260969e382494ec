/**
 * The message tables: `messages_by_conversation` (history, wide rows per seq bucket, newest
 * first; see buckets.ts), `message_by_id` (where a message lives), and the retention work list
 * `messages_by_tenant_day` + `message_days_by_tenant`. An append writes all four in one logged
 * batch after its seq was reserved (conversations.ts).
 */
import cassandra from 'cassandra-driver';
import type { Attachment, MessageRecord, MessageStatus, MessageType } from '../records.ts';
import type { Mutation } from './activity.ts';
import { bucketOf, newestFirstSlices, oldestFirstSlices } from './buckets.ts';
import { cql, UNSET, type CassandraHandle, type Row } from './cql.ts';
import { dayOf, num, parseJsonColumn, str, strOrNull, time, timeOrNull, ts } from './rows.ts';

const COLUMNS = [
  'conversation_id', 'bucket', 'seq', 'message_id', 'tenant_id', 'application_id', 'sender_user_id', 'sender_client_id', 'body', 'message_type',
  'reply_to_message_id', 'attachments', 'mentioned_user_ids', 'status', 'edited_at', 'deleted_at', 'created_at', 'updated_at',
] as const;
const ROW = 'conversation_id = ? AND bucket = ? AND seq = ?';

export const MESSAGES_CQL = {
  insert: cql(`INSERT INTO messages_by_conversation (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map(() => '?').join(', ')})`),
  one: cql(`SELECT ${COLUMNS.join(', ')} FROM messages_by_conversation WHERE ${ROW}`),
  /** A newest-first slice of one bucket: low < seq <= top (clustering order is seq DESC). */
  slice: cql(`SELECT ${COLUMNS.join(', ')} FROM messages_by_conversation WHERE conversation_id = ? AND bucket = ? AND seq > ? AND seq <= ? LIMIT ?`),
  /** The columns unread counting needs, same slice. */
  unreadSlice: cql('SELECT seq, status, sender_user_id FROM messages_by_conversation WHERE conversation_id = ? AND bucket = ? AND seq > ? AND seq <= ? LIMIT ?'),
  edit: cql(`UPDATE messages_by_conversation SET body = ?, mentioned_user_ids = ?, status = 'EDITED', edited_at = ?, updated_at = ? WHERE ${ROW}`),
  tombstone: cql(`UPDATE messages_by_conversation SET body = '', attachments = '[]', mentioned_user_ids = '[]', status = 'DELETED',
    deleted_at = ?, updated_at = ? WHERE ${ROW}`),
  delete: cql(`DELETE FROM messages_by_conversation WHERE ${ROW}`),
  byId: cql('SELECT conversation_id, seq, created_at FROM message_by_id WHERE message_id = ?'),
  byIdInsert: cql('INSERT INTO message_by_id (message_id, conversation_id, seq) VALUES (?, ?, ?)'),
  byIdDelete: cql('DELETE FROM message_by_id WHERE message_id = ?'),
  /**
   * Binds an id sent under an Idempotency-Key to its seq and created_at before its rows are
   * written; not applied, it answers the binding an earlier try made (message-store.ts).
   */
  bind: cql('INSERT INTO message_by_id (message_id, conversation_id, seq, created_at) VALUES (?, ?, ?, ?) IF NOT EXISTS'),
  /**
   * The rows of a bound message, written at a timestamp derived from its created_at: every try
   * of the send writes identical cells at the identical timestamp, so a first try's batch landing
   * after its retry's changes nothing, and a later edit or delete (a newer timestamp) still wins.
   */
  insertAt: cql(`INSERT INTO messages_by_conversation (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map(() => '?').join(', ')}) USING TIMESTAMP ?`),
  dayInsertAt: cql('INSERT INTO messages_by_tenant_day (tenant_id, day, created_at, message_id, conversation_id, seq) VALUES (?, ?, ?, ?, ?, ?) USING TIMESTAMP ?'),
  daysInsertAt: cql('INSERT INTO message_days_by_tenant (tenant_id, day) VALUES (?, ?) USING TIMESTAMP ?'),
  dayInsert: cql('INSERT INTO messages_by_tenant_day (tenant_id, day, created_at, message_id, conversation_id, seq) VALUES (?, ?, ?, ?, ?, ?)'),
  dayDelete: cql('DELETE FROM messages_by_tenant_day WHERE tenant_id = ? AND day = ? AND created_at = ? AND message_id = ?'),
  daySlice: cql('SELECT created_at, message_id, conversation_id, seq FROM messages_by_tenant_day WHERE tenant_id = ? AND day = ? AND created_at < ? LIMIT ?'),
  /**
   * The next slice of a day's entries: after the last one taken (its whole key: entries may share
   * created_at). A pass deletes each slice's entries before reading on; starting the next slice
   * at the day's beginning would scan their tombstones again, B, 2B, 3B... per slice.
   */
  daySliceAfter: cql(`SELECT created_at, message_id, conversation_id, seq FROM messages_by_tenant_day
    WHERE tenant_id = ? AND day = ? AND (created_at, message_id) > (?, ?) AND (created_at) < (?) LIMIT ?`),
  daysInsert: cql('INSERT INTO message_days_by_tenant (tenant_id, day) VALUES (?, ?)'),
  days: cql('SELECT day FROM message_days_by_tenant WHERE tenant_id = ? AND day <= ?'),
  daysDelete: cql('DELETE FROM message_days_by_tenant WHERE tenant_id = ? AND day = ?'),
};

/** Where an id sent under an Idempotency-Key was bound, and when (MESSAGES_CQL.bind). */
export interface Binding {
  conversation_id: string;
  seq: number;
  created_at: string | null;
}

/** The write timestamp (µs) of a bound message's rows: its created_at, the same in every try. */
export function boundTimestamp(created_at: string): cassandra.types.Long {
  return cassandra.types.Long.fromNumber(Date.parse(created_at) * 1000);
}

/** A retention work-list entry: which message, where it lives, and its key in the day's partition. */
export interface ExpiringEntry {
  created_at: string;
  message_id: string;
  conversation_id: string;
  seq: number;
}

export function toMessage(row: Row): MessageRecord {
  return {
    message_id: str(row, 'message_id'),
    conversation_id: str(row, 'conversation_id'),
    tenant_id: str(row, 'tenant_id'),
    application_id: str(row, 'application_id'),
    seq: num(row, 'seq'),
    sender_user_id: strOrNull(row, 'sender_user_id'),
    sender_client_id: strOrNull(row, 'sender_client_id'),
    body: strOrNull(row, 'body') ?? '',
    message_type: str(row, 'message_type') as MessageType,
    reply_to_message_id: strOrNull(row, 'reply_to_message_id'),
    attachments: parseJsonColumn<Attachment[]>(row, 'attachments', []),
    mentioned_user_ids: parseJsonColumn<string[]>(row, 'mentioned_user_ids', []),
    status: str(row, 'status') as MessageStatus,
    edited_at: timeOrNull(row, 'edited_at'),
    deleted_at: timeOrNull(row, 'deleted_at'),
    created_at: time(row, 'created_at'),
    updated_at: time(row, 'updated_at'),
  };
}

export class MessagesTable {
  constructor(
    private readonly h: CassandraHandle,
    readonly bucketSize: number,
  ) {}

  /** The four writes of a new message. */
  /** The rows of a new message; `bound`: an id bound with bind(), its rows at its own timestamp. */
  insertRows(m: MessageRecord, bound = false): Mutation[] {
    const bucket = bucketOf(m.seq, this.bucketSize);
    const values: Record<(typeof COLUMNS)[number], unknown> = Object.assign({}, m, {
      bucket,
      attachments: JSON.stringify(m.attachments),
      mentioned_user_ids: JSON.stringify(m.mentioned_user_ids),
      edited_at: m.edited_at === null ? null : ts(m.edited_at),
      deleted_at: m.deleted_at === null ? null : ts(m.deleted_at),
      created_at: ts(m.created_at),
      updated_at: ts(m.updated_at),
    });
    // A null bound in an INSERT writes a tombstone cell: four per message (sender_client_id or
    // sender_user_id, reply_to_message_id, edited_at, deleted_at), which every history read then
    // scans (measured: 204 tombstone cells for 4 pages of 51 rows). An unset column writes nothing.
    const row = COLUMNS.map((c) => (values[c] === null ? UNSET : values[c]));
    if (bound) {
      const at = boundTimestamp(m.created_at);
      return [
        // message_by_id holds the binding already (bind(), the LWT).
        [MESSAGES_CQL.insertAt, [...row, at]],
        [MESSAGES_CQL.dayInsertAt, [m.tenant_id, dayOf(m.created_at), ts(m.created_at), m.message_id, m.conversation_id, m.seq, at]],
        [MESSAGES_CQL.daysInsertAt, [m.tenant_id, dayOf(m.created_at), at]],
      ];
    }
    return [
      [MESSAGES_CQL.insert, row],
      [MESSAGES_CQL.byIdInsert, [m.message_id, m.conversation_id, m.seq]],
      [MESSAGES_CQL.dayInsert, [m.tenant_id, dayOf(m.created_at), ts(m.created_at), m.message_id, m.conversation_id, m.seq]],
      [MESSAGES_CQL.daysInsert, [m.tenant_id, dayOf(m.created_at)]],
    ];
  }

  /**
   * Binds `message_id` to (conversation, seq, created_at) unless it is bound already (one LWT):
   * answers the binding that holds now, this one or an earlier try's. A binding without a time
   * (its row was written by a release before schema version 4) answers created_at null.
   */
  async bind(m: Pick<MessageRecord, 'message_id' | 'conversation_id' | 'seq' | 'created_at'>): Promise<Binding> {
    const { applied, current } = await this.h.lwt(MESSAGES_CQL.bind, [m.message_id, m.conversation_id, m.seq, ts(m.created_at)]);
    if (applied) return { conversation_id: m.conversation_id, seq: m.seq, created_at: m.created_at };
    return { conversation_id: str(current, 'conversation_id'), seq: num(current, 'seq'), created_at: timeOrNull(current, 'created_at') };
  }

  /** Where a message id lives, in any conversation. */
  async locate(message_id: string): Promise<Binding | null> {
    const row = await this.h.row(MESSAGES_CQL.byId, [message_id]);
    return row && row.conversation_id != null ? { conversation_id: str(row, 'conversation_id'), seq: num(row, 'seq'), created_at: timeOrNull(row, 'created_at') } : null;
  }

  async bySeq(conversation_id: string, seq: number): Promise<MessageRecord | null> {
    const row = await this.h.row(MESSAGES_CQL.one, [conversation_id, bucketOf(seq, this.bucketSize), seq]);
    return row && row.message_id != null ? toMessage(row) : null;
  }

  /** The message if it belongs to this conversation. */
  async inConversation(conversation_id: string, message_id: string): Promise<MessageRecord | null> {
    const at = await this.locate(message_id);
    if (!at || at.conversation_id !== conversation_id) return null;
    const m = await this.bySeq(conversation_id, at.seq);
    return m && m.message_id === message_id ? m : null;
  }

  async edit(m: MessageRecord, body: string, mentions: string[] | undefined, at: string): Promise<MessageRecord> {
    const mentioned = mentions ?? m.mentioned_user_ids;
    await this.h.rows(MESSAGES_CQL.edit, [body, JSON.stringify(mentioned), ts(at), ts(at), m.conversation_id, bucketOf(m.seq, this.bucketSize), m.seq]);
    return Object.assign({}, m, { body, mentioned_user_ids: mentioned, status: 'EDITED' as const, edited_at: at, updated_at: at });
  }

  async tombstone(m: MessageRecord, at: string): Promise<MessageRecord> {
    await this.h.rows(MESSAGES_CQL.tombstone, [ts(at), ts(at), m.conversation_id, bucketOf(m.seq, this.bucketSize), m.seq]);
    return Object.assign({}, m, { body: '', attachments: [], mentioned_user_ids: [], status: 'DELETED' as const, deleted_at: at, updated_at: at });
  }

  /** History: up to `n` messages with seq <= `from`, newest first, walking buckets down. */
  async newestFirst(conversation_id: string, from: number, n: number): Promise<MessageRecord[]> {
    const out: MessageRecord[] = [];
    for (const s of newestFirstSlices(from, this.bucketSize)) {
      const rows = await this.h.rows(MESSAGES_CQL.slice, [conversation_id, s.bucket, s.low, s.top, n - out.length]);
      out.push(...rows.map(toMessage));
      if (out.length >= n) break;
    }
    return out;
  }

  /**
   * Messages above `after` up to `through` that are unread for `user_id`: not DELETED, not sent by
   * them. `stopAtFirst` answers 0 or 1 (has_unread). Reads only the columns it needs, in chunks.
   */
  async countUnread(conversation_id: string, user_id: string, after: number, through: number, stopAtFirst: boolean): Promise<number> {
    const chunk = stopAtFirst ? 50 : 1000;
    let count = 0;
    for (const s of oldestFirstSlices(after, through, this.bucketSize)) {
      let top = s.top;
      for (;;) {
        const rows = await this.h.rows(MESSAGES_CQL.unreadSlice, [conversation_id, s.bucket, s.low, top, chunk]);
        for (const r of rows) {
          if (strOrNull(r, 'status') !== 'DELETED' && strOrNull(r, 'sender_user_id') !== user_id) count += 1;
          if (stopAtFirst && count > 0) return 1;
        }
        if (rows.length < chunk) break;
        top = num(rows[rows.length - 1]!, 'seq') - 1;
      }
    }
    return count;
  }

  /** Retention: the days holding messages of the tenant up to `day`, oldest first. */
  async days(tenant_id: string, day: string): Promise<string[]> {
    return (await this.h.rows(MESSAGES_CQL.days, [tenant_id, day])).map((r) => String(r.day));
  }

  /** Up to `n` of the day's entries created before `cutoff`, in key order: from the day's start, or after `after`. */
  async expiring(tenant_id: string, day: string, cutoff: string, n: number, after: ExpiringEntry | null = null): Promise<ExpiringEntry[]> {
    const rows = after === null
      ? await this.h.rows(MESSAGES_CQL.daySlice, [tenant_id, day, ts(cutoff), n])
      : await this.h.rows(MESSAGES_CQL.daySliceAfter, [tenant_id, day, ts(after.created_at), after.message_id, ts(cutoff), n]);
    return rows.map((r) => ({ created_at: time(r, 'created_at'), message_id: str(r, 'message_id'), conversation_id: str(r, 'conversation_id'), seq: num(r, 'seq') }));
  }

  /** Really deletes a message (retention): its row, its id lookup, its retention entry. */
  deleteRows(tenant_id: string, e: ExpiringEntry): Mutation[] {
    return [
      [MESSAGES_CQL.delete, [e.conversation_id, bucketOf(e.seq, this.bucketSize), e.seq]],
      [MESSAGES_CQL.byIdDelete, [e.message_id]],
      [MESSAGES_CQL.dayDelete, [tenant_id, dayOf(e.created_at), ts(e.created_at), e.message_id]],
    ];
  }

  async dropDay(tenant_id: string, day: string): Promise<void> {
    await this.h.rows(MESSAGES_CQL.daysDelete, [tenant_id, day]);
  }
}
