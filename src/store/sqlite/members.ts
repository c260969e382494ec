/**
 * The `members` table: statements, and the MemberStore of the SQLite driver. Every membership
 * change keeps conversations.member_count in the same op, so the count can never drift.
 */
import type { ConversationType, MemberRecord, MemberRole, MemberView, Page, ProfileSummary, StoreContext } from '../records.ts';
import { memberPosition, pageLimit, timestampOrNow, type MemberPosition } from '../positions.ts';
import type { AddMemberInput, ConversationRef, ListMembersQuery, MemberStatusInput, MemberStore, NewMember } from '../types-conversations.ts';
import type { ConversationsTable } from './conversations.ts';
import type { ReadStateTable } from './read-state.ts';
import { checkEpoch, jsonList, type Db, type SqliteHandle } from './shared.ts';

const COLUMNS = 'm.member_id, m.conversation_id, m.user_id, m.role, m.status, m.joined_at, m.updated_at';
const WITH_PROFILE = 'LEFT JOIN profiles p ON p.tenant_id = m.tenant_id AND p.user_id = m.user_id';

/** Members page SQL (ascending keyset on joined_at, member_id); `active` picks the partial index. */
export function memberPageSql(active: boolean): string {
  return `SELECT ${COLUMNS}, p.display_name, p.avatar_url FROM members m ${WITH_PROFILE}
    WHERE m.conversation_id = :conversation_id ${active ? "AND m.status = 'ACTIVE'" : ''}
      AND m.joined_at >= :joined_at AND (m.joined_at > :joined_at OR m.member_id > :member_id)
    ORDER BY m.joined_at, m.member_id LIMIT :n`;
}

export class MembersTable {
  private readonly getStmt;
  private readonly insertStmt;
  private readonly reactivateStmt;
  private readonly statusStmt;
  private readonly roleStmt;
  private readonly previewStmt;
  private readonly pageStmts;
  private readonly filterStmt;
  private readonly distinctStmt;

  constructor(db: Db) {
    this.getStmt = db.prepare<[string, string], MemberRecord>(`SELECT ${COLUMNS} FROM members m WHERE m.conversation_id = ? AND m.user_id = ?`);
    this.insertStmt = db.prepare<[Record<string, string>]>(`INSERT INTO members
        (conversation_id, user_id, member_id, tenant_id, application_id, role, status, joined_at, updated_at)
      VALUES (:conversation_id, :user_id, :member_id, :tenant_id, :application_id, :role, 'ACTIVE', :at, :at)`);
    this.reactivateStmt = db.prepare<[MemberRole, string, string, string, string]>(
      "UPDATE members SET status = 'ACTIVE', role = ?, joined_at = ?, updated_at = ? WHERE conversation_id = ? AND user_id = ?",
    );
    this.statusStmt = db.prepare<[string, string, string, string]>('UPDATE members SET status = ?, updated_at = ? WHERE conversation_id = ? AND user_id = ?');
    this.roleStmt = db.prepare<[string, string, string, string]>('UPDATE members SET role = ?, updated_at = ? WHERE conversation_id = ? AND user_id = ?');
    this.previewStmt = db.prepare<[string, number], ProfileSummary>(`SELECT m.user_id, p.display_name, p.avatar_url FROM members m ${WITH_PROFILE}
      WHERE m.conversation_id = ? AND m.status = 'ACTIVE' ORDER BY m.joined_at, m.member_id LIMIT ?`);
    this.pageStmts = {
      active: db.prepare<[Record<string, string | number>], MemberView>(memberPageSql(true)),
      all: db.prepare<[Record<string, string | number>], MemberView>(memberPageSql(false)),
    };
    this.filterStmt = db
      .prepare<[string, string], string>(
        "SELECT user_id FROM members WHERE conversation_id = ? AND status = 'ACTIVE' AND user_id IN (SELECT value FROM json_each(?))",
      )
      .pluck();
    this.distinctStmt = db
      .prepare<[string], number>(`SELECT count(DISTINCT m.user_id) FROM members m CROSS JOIN conversations c
        WHERE m.tenant_id = ? AND m.status = 'ACTIVE' AND c.conversation_id = m.conversation_id AND c.deleted_at IS NULL`)
      .pluck();
  }

  get(conversation_id: string, user_id: string): MemberRecord | null {
    return this.getStmt.get(conversation_id, user_id) ?? null;
  }

  insert(ctx: StoreContext, conversation_id: string, m: NewMember, at: string): MemberRecord {
    this.insertStmt.run({ conversation_id, user_id: m.user_id, member_id: m.member_id, role: m.role, at, ...pickContext(ctx) });
    return this.get(conversation_id, m.user_id)!;
  }

  reactivate(conversation_id: string, user_id: string, role: MemberRole, at: string): MemberRecord {
    this.reactivateStmt.run(role, at, at, conversation_id, user_id);
    return this.get(conversation_id, user_id)!;
  }

  preview(conversation_id: string, n: number): ProfileSummary[] {
    return n > 0 ? this.previewStmt.all(conversation_id, n) : [];
  }

  activeUsersOfTenant(tenant_id: string): number {
    return this.distinctStmt.get(tenant_id) ?? 0;
  }

  setStatus(conversation_id: string, user_id: string, status: string, at: string): MemberRecord {
    this.statusStmt.run(status, at, conversation_id, user_id);
    return this.get(conversation_id, user_id)!;
  }

  setRole(conversation_id: string, user_id: string, role: MemberRole, at: string): MemberRecord {
    this.roleStmt.run(role, at, conversation_id, user_id);
    return this.get(conversation_id, user_id)!;
  }

  page(conversation_id: string, active: boolean, after: MemberPosition | null, n: number): MemberView[] {
    const stmt = active ? this.pageStmts.active : this.pageStmts.all;
    return stmt.all({ conversation_id, joined_at: after?.joined_at ?? '', member_id: after?.member_id ?? '', n });
  }

  filterActive(conversation_id: string, user_ids: readonly string[]): string[] {
    return this.filterStmt.all(conversation_id, jsonList(user_ids));
  }
}

function pickContext(ctx: StoreContext): StoreContext {
  return { tenant_id: ctx.tenant_id, application_id: ctx.application_id };
}

export class SqliteMemberStore implements MemberStore {
  private readonly idsOfStmts;

  constructor(
    private readonly h: SqliteHandle,
    private readonly conversations: ConversationsTable,
    private readonly table: MembersTable,
    private readonly readState: ReadStateTable,
  ) {
    const sql = (typed: boolean): string => `SELECT m.conversation_id FROM members m CROSS JOIN conversations c
      WHERE m.tenant_id = :tenant_id AND m.user_id = :user_id AND m.application_id = :application_id AND m.status = 'ACTIVE'
        AND c.conversation_id = m.conversation_id AND c.deleted_at IS NULL ${typed ? 'AND c.type = :type' : ''}
      ORDER BY m.conversation_id`;
    this.idsOfStmts = {
      any: h.db.prepare<[Record<string, string>], string>(sql(false)).pluck(),
      typed: h.db.prepare<[Record<string, string>], string>(sql(true)).pluck(),
    };
  }

  async add(input: AddMemberInput): Promise<{ member: MemberRecord; changed: boolean } | null> {
    checkEpoch(input.epoch);
    const at = timestampOrNow(input.at);
    return this.h.write(() => {
      const conv = this.conversations.fence(input, input.epoch);
      if (!conv) return null;
      const id = conv.conversation_id;
      const row = this.table.get(id, input.user_id);
      if (row?.status === 'ACTIVE') return { member: row, changed: false };
      const member = row ? this.table.reactivate(id, input.user_id, input.role, at) : this.table.insert(conv, id, input, at);
      this.conversations.addMemberCount(id, 1);
      this.readState.advance(id, input.user_id, conv.last_seq, at);
      return { member, changed: true };
    });
  }

  async setStatus(input: MemberStatusInput): Promise<{ member: MemberRecord; changed: boolean } | null> {
    checkEpoch(input.epoch);
    if (input.status !== 'LEFT' && input.status !== 'REMOVED') throw new RangeError(`status must be LEFT or REMOVED (got ${String(input.status)})`);
    const at = timestampOrNow(input.at);
    return this.h.write(() => {
      const conv = this.conversations.fence(input, input.epoch);
      const row = conv ? this.table.get(conv.conversation_id, input.user_id) : null;
      if (!conv || !row) return null;
      if (row.status !== 'ACTIVE') return { member: row, changed: false };
      this.conversations.addMemberCount(conv.conversation_id, -1);
      return { member: this.table.setStatus(conv.conversation_id, input.user_id, input.status, at), changed: true };
    });
  }

  async setRole(input: Parameters<MemberStore['setRole']>[0]): Promise<MemberRecord | null> {
    checkEpoch(input.epoch);
    const at = timestampOrNow(input.at);
    return this.h.write(() => {
      const conv = this.conversations.fence(input, input.epoch);
      const row = conv ? this.table.get(conv.conversation_id, input.user_id) : null;
      if (!conv || row?.status !== 'ACTIVE') return null;
      return row.role === input.role ? row : this.table.setRole(conv.conversation_id, input.user_id, input.role, at);
    });
  }

  async get(ref: ConversationRef, user_id: string): Promise<MemberRecord | null> {
    return this.h.read(() => (this.conversations.live(ref) ? this.table.get(ref.conversation_id, user_id) : null));
  }

  async list(query: ListMembersQuery): Promise<Page<MemberView, MemberPosition> | null> {
    const limit = pageLimit(query.limit);
    const after = query.after == null ? null : memberPosition(query.after);
    return this.h.read(() => {
      if (!this.conversations.live(query)) return null;
      const rows = this.table.page(query.conversation_id, query.include_inactive !== true, after, limit + 1);
      const items = rows.slice(0, limit);
      const last = items[items.length - 1];
      return { items, next: rows.length > limit && last ? { joined_at: last.joined_at, member_id: last.member_id } : null };
    });
  }

  async filterActive(ref: ConversationRef, user_ids: readonly string[]): Promise<string[]> {
    if (user_ids.length === 0) return [];
    return this.h.read(() => (this.conversations.live(ref) ? this.table.filterActive(ref.conversation_id, user_ids) : []));
  }

  async conversationIdsOf(ctx: StoreContext, user_id: string, type?: ConversationType): Promise<string[]> {
    const params = { user_id, type: type ?? '', ...pickContext(ctx) };
    return this.h.read(() => (type === undefined ? this.idsOfStmts.any : this.idsOfStmts.typed).all(params));
  }
}
