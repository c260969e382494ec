/**
 * The `messages` table and its statements (the MessageStore using them: message-store.ts).
 *
 * History is a range of the unique index messages_by_seq (conversation_id, seq), walked
 * backwards: seq < position, newest first, LIMIT n+1 (the extra row only says whether a next
 * page exists). No OFFSET, so page k costs the same as page 1.
 */
import { newMessageRecord } from '../inputs.ts';
import type { Attachment, MessageRecord, MessageView } from '../records.ts';
import type { AppendMessageInput } from '../types-messages.ts';
import { parseJson, type Db } from './shared.ts';

type InsertParams = [string, string, string, string, number, string | null, string | null, string, string, string | null, string, string, string, string];
type MessageRow = Omit<MessageRecord, 'attachments' | 'mentioned_user_ids'> & { attachments: string; mentioned_user_ids: string };
export type ViewRow = MessageRow & { sender_display_name: string | null; sender_avatar_url: string | null };

const VIEW = `SELECT m.*, p.display_name AS sender_display_name, p.avatar_url AS sender_avatar_url FROM messages m
  LEFT JOIN profiles p ON p.tenant_id = m.tenant_id AND p.user_id = m.sender_user_id`;

/** Parameters: conversation_id, seq bound (exclusive), n. */
export const HISTORY_SQL = `${VIEW} WHERE m.conversation_id = ? AND m.seq < ? ORDER BY m.seq DESC LIMIT ?`;

/**
 * Retention (docs/storage.md): conversations of a tenant in id order, deleted ones included; in
 * each, the first message not yet expired, read from the oldest seq up (so the read stops there:
 * its cost is the expired messages plus one); then the messages before it.
 */
export const RETENTION_CONVERSATIONS_SQL = 'SELECT conversation_id FROM conversations WHERE tenant_id = ? AND conversation_id > ? ORDER BY conversation_id LIMIT ?';
export const RETENTION_BOUNDARY_SQL = 'SELECT seq FROM messages WHERE conversation_id = ? AND created_at >= ? ORDER BY seq LIMIT 1';
export const RETENTION_DELETE_SQL = 'DELETE FROM messages WHERE rowid IN (SELECT rowid FROM messages WHERE conversation_id = ? AND seq < ? ORDER BY seq LIMIT ?)';

export function toRecord(row: MessageRow): MessageRecord {
  const { attachments, mentioned_user_ids, ...rest } = row;
  return { attachments: parseJson<Attachment[]>(attachments), mentioned_user_ids: parseJson<string[]>(mentioned_user_ids), ...rest };
}

export class MessagesTable {
  readonly byIdStmt;
  private readonly bySeqStmt;
  private readonly insertStmt;
  private readonly editStmt;
  private readonly tombstoneStmt;
  private readonly viewStmt;
  private readonly historyStmt;
  private readonly tenantConversationsStmt;
  private readonly expiryBoundaryStmt;
  private readonly expireStmt;
  private readonly removeStmt;

  constructor(db: Db) {
    this.byIdStmt = db.prepare<[string], MessageRow>('SELECT * FROM messages WHERE message_id = ?');
    this.bySeqStmt = db.prepare<[string, number], string>('SELECT message_id FROM messages WHERE conversation_id = ? AND seq = ?').pluck();
    // Positional parameters: binding from an object costs ~3 µs more per append (measured).
    this.insertStmt = db.prepare<InsertParams>(`INSERT INTO messages (message_id, conversation_id, tenant_id,
        application_id, seq, sender_user_id, sender_client_id, body, message_type, reply_to_message_id, attachments, mentioned_user_ids,
        status, edited_at, deleted_at, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'ACTIVE', NULL, NULL, ?, ?)`);
    this.editStmt = db.prepare<[string, string | null, string, string, string]>(`UPDATE messages SET body = ?,
        mentioned_user_ids = coalesce(?, mentioned_user_ids), status = 'EDITED', edited_at = ?, updated_at = ? WHERE message_id = ?`);
    this.tombstoneStmt = db.prepare<[string, string, string]>(`UPDATE messages SET body = '', attachments = '[]', mentioned_user_ids = '[]',
        status = 'DELETED', deleted_at = ?, updated_at = ? WHERE message_id = ?`);
    this.viewStmt = db.prepare<[string, string], ViewRow>(`${VIEW} WHERE m.message_id = ? AND m.conversation_id = ?`);
    this.historyStmt = db.prepare<[string, number, number], ViewRow>(HISTORY_SQL);
    this.removeStmt = db.prepare<[string]>('DELETE FROM messages WHERE message_id = ?');
    this.tenantConversationsStmt = db.prepare<[string, string, number], string>(RETENTION_CONVERSATIONS_SQL).pluck();
    this.expiryBoundaryStmt = db.prepare<[string, string], number>(RETENTION_BOUNDARY_SQL).pluck();
    this.expireStmt = db.prepare<[string, number, number]>(RETENTION_DELETE_SQL);
  }

  /** The message if it belongs to this conversation. */
  inConversation(conversation_id: string, message_id: string): MessageRecord | null {
    const row = this.byIdStmt.get(message_id);
    return row && row.conversation_id === conversation_id ? toRecord(row) : null;
  }

  seqHolder(conversation_id: string, seq: number): string | null {
    return this.bySeqStmt.get(conversation_id, seq) ?? null;
  }

  /**
   * Inserts and answers the stored record without reading it back (the hot path). JSON columns
   * are answered parsed from the text stored, so the answer equals what a later read returns.
   */
  insert(input: AppendMessageInput, at: string): MessageRecord {
    const r = newMessageRecord(input, at);
    this.insertStmt.run(
      r.message_id, r.conversation_id, r.tenant_id, r.application_id, r.seq, r.sender_user_id, r.sender_client_id, r.body, r.message_type,
      r.reply_to_message_id, JSON.stringify(r.attachments), JSON.stringify(r.mentioned_user_ids), at, at,
    );
    return r;
  }

  /** Undoes an insert of the same op (hot path of append; see message-store.ts). */
  remove(message_id: string): void {
    this.removeStmt.run(message_id);
  }

  edit(message_id: string, body: string, mentions: string[] | undefined, at: string): MessageRecord {
    this.editStmt.run(body, mentions === undefined ? null : JSON.stringify(mentions), at, at, message_id);
    return toRecord(this.byIdStmt.get(message_id)!);
  }

  tombstone(message_id: string, at: string): MessageRecord {
    this.tombstoneStmt.run(at, at, message_id);
    return toRecord(this.byIdStmt.get(message_id)!);
  }

  view(conversation_id: string, message_id: string): ViewRow | null {
    return this.viewStmt.get(message_id, conversation_id) ?? null;
  }

  history(conversation_id: string, beforeSeq: number, n: number): ViewRow[] {
    return this.historyStmt.all(conversation_id, beforeSeq, n);
  }

  /**
   * Deletes up to `n` messages of `tenant_id` created before `cutoff`, walking the tenant's
   * conversations from the one after `after` (id order). Answers how many it deleted and where
   * the next call resumes: `after` is the last conversation known to hold no expired message
   * (the walk is over when `done`). One call reads at most 256 conversations.
   *
   * A conversation's expired messages are those before its first message not expired, in seq
   * order. Seqs follow creation, so that is every message created before `cutoff`, except one the
   * actor's clock stamped a little earlier than a message before it (a clock step back): it stays
   * until a later run finds it first in line.
   */
  expireSome(tenant_id: string, cutoff: string, after: string, n: number): { deleted: number; after: string; done: boolean } {
    let deleted = 0;
    // At most 256 conversations per call, expired messages or not: a tenant of a million
    // conversations is walked in many short transactions, never in one long stall.
    for (let scanned = 0; scanned < 256; scanned += 64) {
      const ids = this.tenantConversationsStmt.all(tenant_id, after, 64);
      if (ids.length === 0) return { deleted, after, done: true };
      for (const id of ids) {
        const boundary = this.expiryBoundaryStmt.get(id, cutoff) ?? Number.MAX_SAFE_INTEGER;
        const budget = n - deleted;
        const k = this.expireStmt.run(id, boundary, budget).changes;
        deleted += k;
        // Budget spent: this conversation may hold more, so the next call starts with it again.
        if (k === budget) return { deleted, after, done: false };
        after = id;
      }
    }
    return { deleted, after, done: false };
  }
}

export function toView(row: ViewRow, reactions: MessageView['reactions']): MessageView {
  const { sender_display_name, sender_avatar_url, ...message } = row;
  const sender = row.sender_user_id === null ? null : { user_id: row.sender_user_id, display_name: sender_display_name, avatar_url: sender_avatar_url };
  return { reactions, sender, ...toRecord(message) };
}
