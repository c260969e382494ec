/**
 * The `conversations` table: its statements and the synchronous building blocks the other table
 * files use inside a write op (fencing, advancing last_seq, keeping member_count).
 */
import { StaleEpochError } from '../errors.ts';
import type { ConversationRecord, ConversationType, MemberRole, MemberStatus } from '../records.ts';
import type { ConversationGate, ConversationGist, ConversationPatch, ConversationRef } from '../types-conversations.ts';
import { checkEpoch, type Db } from './shared.ts';

const LIVE = 'conversation_id = :conversation_id AND tenant_id = :tenant_id AND application_id = :application_id AND deleted_at IS NULL';

export type ConversationRow = ConversationRecord;
export type ListedRow = ConversationRow & { my_role: MemberRole | null };

/** Keyset condition for "after (at, id)" in DESC order: the first term bounds the index range. */
const after = (c: string): string => `${c}.last_activity_at <= :at AND (${c}.last_activity_at < :at OR ${c}.conversation_id < :id)`;
const ORDER = 'ORDER BY c.last_activity_at DESC, c.conversation_id DESC';

/**
 * Listing SQL, one statement per variant so each has a plan fixed on its index:
 *  - machine: a range of conversations_by_activity (or _by_type_activity with a type);
 *  - user: the user's ACTIVE memberships (members_active_by_user; CROSS JOIN keeps members as
 *    the outer loop, so the cost is the user's conversations in the context, not the context's),
 *    sorted, plus PUBLIC channels they are not in, read in order from conversations_public_channels
 *    (INDEXED BY: the planner would otherwise pick the type index and skip private channels row
 *    by row; and a missing index fails loudly at prepare instead of degrading to a scan).
 *    Each half is limited before the merge.
 * Parameters: tenant_id, application_id, user_id, type, at, id, n.
 */
export function listSql(viewer: 'user' | 'machine', type: ConversationType | undefined): string {
  const typed = type === undefined ? '' : 'AND c.type = :type';
  if (viewer === 'machine') {
    return `SELECT c.*, NULL AS my_role FROM conversations c
      WHERE c.tenant_id = :tenant_id AND c.application_id = :application_id AND c.deleted_at IS NULL ${typed} AND ${after('c')}
      ${ORDER} LIMIT :n`;
  }
  const mine = `SELECT * FROM (SELECT c.*, m.role AS my_role FROM members m CROSS JOIN conversations c
      WHERE m.tenant_id = :tenant_id AND m.user_id = :user_id AND m.application_id = :application_id AND m.status = 'ACTIVE'
        AND c.conversation_id = m.conversation_id AND c.deleted_at IS NULL ${typed} AND ${after('c')}
      ${ORDER} LIMIT :n)`;
  if (type !== undefined && type !== 'CHANNEL') return mine;
  const publicChannels = `SELECT * FROM (SELECT c.*, NULL AS my_role FROM conversations c INDEXED BY conversations_public_channels
      WHERE c.tenant_id = :tenant_id AND c.application_id = :application_id
        AND c.type = 'CHANNEL' AND c.visibility = 'PUBLIC' AND c.deleted_at IS NULL AND ${after('c')}
        AND NOT EXISTS (SELECT 1 FROM members x WHERE x.conversation_id = c.conversation_id AND x.user_id = :user_id AND x.status = 'ACTIVE')
      ${ORDER} LIMIT :n)`;
  return `${mine} UNION ALL ${publicChannels} ORDER BY last_activity_at DESC, conversation_id DESC LIMIT :n`;
}

export class ConversationsTable {
  private readonly byIdStmt;
  private readonly liveStmt;
  private readonly gateStmt;
  private readonly insertStmt;
  private readonly claimStmt;
  private readonly setEpochStmt;
  private readonly advanceStmt;
  private readonly fencedAdvanceStmt;
  private readonly memberCountStmt;
  private readonly updateStmt;
  private readonly softDeleteStmt;
  private readonly countsStmt;

  constructor(db: Db) {
    this.byIdStmt = db.prepare<[string], ConversationRow>('SELECT * FROM conversations WHERE conversation_id = ?');
    this.liveStmt = db.prepare<[ConversationRef], ConversationRow>(`SELECT * FROM conversations WHERE ${LIVE}`);
    // Positional parameters and the gist's columns only: the hot read of history pages.
    this.gateStmt = db.prepare<[string | null, string, string, string], ConversationGist & { member_status: MemberStatus | null }>(
      `SELECT c.conversation_id, c.type, c.visibility, c.status, c.revision, m.status AS member_status FROM conversations c
        LEFT JOIN members m ON m.conversation_id = c.conversation_id AND m.user_id = ?
        WHERE c.conversation_id = ? AND c.tenant_id = ? AND c.application_id = ? AND c.deleted_at IS NULL`,
    );
    this.insertStmt = db.prepare<[ConversationRow]>(`INSERT INTO conversations (
        conversation_id, tenant_id, application_id, type, visibility, name, description, status, created_by_user_id,
        created_by_client_id, last_activity_at, created_at, updated_at, deleted_at, member_count, last_seq, epoch, revision)
      VALUES (:conversation_id, :tenant_id, :application_id, :type, :visibility, :name, :description, :status, :created_by_user_id,
        :created_by_client_id, :last_activity_at, :created_at, :updated_at, :deleted_at, :member_count, :last_seq, :epoch, :revision)`);
    this.claimStmt = db.prepare<[ConversationRef], ConversationRow>(`UPDATE conversations SET epoch = epoch + 1 WHERE ${LIVE} RETURNING *`);
    this.setEpochStmt = db.prepare<[number, string]>('UPDATE conversations SET epoch = ? WHERE conversation_id = ?');
    // max(): the actor's clock may step back a little; activity order must not.
    this.advanceStmt = db.prepare<[number, string, string]>(
      'UPDATE conversations SET last_seq = max(last_seq, ?), last_activity_at = max(last_activity_at, ?), revision = revision + 1 WHERE conversation_id = ?',
    );
    // Positional parameters (the append's hot path): seq, at, epoch, id, tenant, application, epoch.
    this.fencedAdvanceStmt = db.prepare<[number, string, number, string, string, string, number]>(
      `UPDATE conversations SET last_seq = max(last_seq, ?), last_activity_at = max(last_activity_at, ?), revision = revision + 1,
        epoch = max(epoch, ?) WHERE conversation_id = ? AND tenant_id = ? AND application_id = ? AND deleted_at IS NULL AND epoch <= ?`,
    );
    this.memberCountStmt = db.prepare<[number, string]>('UPDATE conversations SET member_count = member_count + ? WHERE conversation_id = ?');
    this.updateStmt = db.prepare<[Record<string, string | number | null>], ConversationRow>(`UPDATE conversations SET
        name = CASE WHEN :set_name THEN :name ELSE name END,
        description = CASE WHEN :set_description THEN :description ELSE description END,
        visibility = CASE WHEN :set_visibility THEN :visibility ELSE visibility END,
        status = CASE WHEN :set_status THEN :status ELSE status END,
        updated_at = :at
      WHERE conversation_id = :conversation_id RETURNING *`);
    this.softDeleteStmt = db.prepare<[string, string, string], ConversationRow>(
      'UPDATE conversations SET deleted_at = ?, updated_at = ? WHERE conversation_id = ? RETURNING *',
    );
    this.countsStmt = db.prepare<[string], { type: ConversationType; n: number }>(
      'SELECT type, count(*) AS n FROM conversations WHERE tenant_id = ? AND deleted_at IS NULL GROUP BY type',
    );
  }

  /** Any conversation with this id, in any context, deleted or not. */
  byId(conversation_id: string): ConversationRow | null {
    return this.byIdStmt.get(conversation_id) ?? null;
  }

  /** The conversation if it exists in this context and is not deleted. */
  live(ref: ConversationRef): ConversationRow | null {
    return this.liveStmt.get(pick(ref)) ?? null;
  }

  /** The live conversation and the user's membership status (any status; null: none), one statement. */
  gate(ref: ConversationRef, user_id: string | null): ConversationGate | null {
    const row = this.gateStmt.get(user_id, ref.conversation_id, ref.tenant_id, ref.application_id);
    if (!row) return null;
    return {
      conversation: { conversation_id: row.conversation_id, type: row.type, visibility: row.visibility, status: row.status, revision: row.revision },
      member_status: row.member_status,
    };
  }

  insert(row: ConversationRow): void {
    this.insertStmt.run(row);
  }

  claim(ref: ConversationRef): ConversationRow | null {
    return this.claimStmt.get(pick(ref)) ?? null;
  }

  /**
   * The fencing rule, for use at the start of every write op on a conversation: null when the
   * conversation is absent or deleted; StaleEpochError when `epoch` is below the stored one;
   * a higher epoch is adopted (stored), so the writer that presented it fences older ones.
   */
  fence(ref: ConversationRef, epoch: number): ConversationRow | null {
    checkEpoch(epoch);
    const row = this.live(ref);
    if (!row) return null;
    if (epoch < row.epoch) throw new StaleEpochError(row.conversation_id, epoch, row.epoch);
    if (epoch > row.epoch) {
      this.setEpochStmt.run(epoch, row.conversation_id);
      row.epoch = epoch;
    }
    return row;
  }

  /**
   * The append's hot path: the fencing rule and advance() in one statement. True when applied;
   * false when the conversation is absent, deleted or holds a higher epoch (nothing written):
   * the caller asks fence() which.
   */
  fencedAdvance(ref: ConversationRef, epoch: number, seq: number, at: string): boolean {
    checkEpoch(epoch);
    return this.fencedAdvanceStmt.run(seq, at, epoch, ref.conversation_id, ref.tenant_id, ref.application_id, epoch).changes === 1;
  }

  advance(conversation_id: string, seq: number, at: string): void {
    this.advanceStmt.run(seq, at, conversation_id);
  }

  addMemberCount(conversation_id: string, delta: number): void {
    if (delta !== 0) this.memberCountStmt.run(delta, conversation_id);
  }

  update(conversation_id: string, patch: ConversationPatch, at: string): ConversationRow {
    const has = (k: keyof ConversationPatch): number => (Object.hasOwn(patch, k) && patch[k] !== undefined ? 1 : 0);
    return this.updateStmt.get({
      conversation_id,
      at,
      set_name: has('name'),
      name: patch.name ?? null,
      set_description: has('description'),
      description: patch.description ?? null,
      set_visibility: has('visibility'),
      visibility: patch.visibility ?? null,
      set_status: has('status'),
      status: patch.status ?? null,
    })!;
  }

  softDelete(conversation_id: string, at: string): ConversationRow {
    return this.softDeleteStmt.get(at, at, conversation_id)!;
  }

  countsByType(tenant_id: string): Map<ConversationType, number> {
    return new Map(this.countsStmt.all(tenant_id).map((r) => [r.type, r.n]));
  }
}

/** Binds only the three fields of a ref, whatever else the caller's input object carries. */
function pick(ref: ConversationRef): ConversationRef {
  return { conversation_id: ref.conversation_id, tenant_id: ref.tenant_id, application_id: ref.application_id };
}
