/**
 * The membership tables: `members` (the truth, one row per user and conversation),
 * `members_by_join` (page order), `memberships_by_user` (a user's ACTIVE conversations) and
 * `active_members_by_tenant` (overview). Every membership change writes all four in one logged
 * batch (see cql.ts: eventually all or nothing), built here so the tables cannot drift apart.
 */
import type { ConversationRecord, ConversationType, MemberRecord, MemberRole, MemberStatus, StoreContext } from '../records.ts';
import type { MemberPosition } from '../positions.ts';
import type { Mutation } from './activity.ts';
import { cql, type CassandraHandle } from './cql.ts';
import { str, time, ts } from './rows.ts';
import type { Row } from './cql.ts';

const MEMBER_COLUMNS = 'member_id, conversation_id, user_id, role, status, joined_at, updated_at';

export const MEMBERS_CQL = {
  get: cql(`SELECT ${MEMBER_COLUMNS} FROM members WHERE conversation_id = ? AND user_id = ?`),
  getMany: cql(`SELECT ${MEMBER_COLUMNS} FROM members WHERE conversation_id = ? AND user_id IN ?`),
  all: cql('SELECT user_id, status FROM members WHERE conversation_id = ?'),
  upsert: cql(`INSERT INTO members (${MEMBER_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`),
  setStatus: cql('UPDATE members SET status = ?, updated_at = ? WHERE conversation_id = ? AND user_id = ?'),
  setRole: cql('UPDATE members SET role = ?, updated_at = ? WHERE conversation_id = ? AND user_id = ?'),
  joinInsert: cql('INSERT INTO members_by_join (conversation_id, joined_at, member_id, user_id) VALUES (?, ?, ?, ?)'),
  joinDelete: cql('DELETE FROM members_by_join WHERE conversation_id = ? AND joined_at = ? AND member_id = ?'),
  joinPage: cql('SELECT joined_at, member_id, user_id FROM members_by_join WHERE conversation_id = ? LIMIT ?'),
  joinPageAfter: cql('SELECT joined_at, member_id, user_id FROM members_by_join WHERE conversation_id = ? AND (joined_at, member_id) > (?, ?) LIMIT ?'),
  userInsert: cql('INSERT INTO memberships_by_user (tenant_id, user_id, application_id, conversation_id, type, role) VALUES (?, ?, ?, ?, ?, ?)'),
  userDelete: cql('DELETE FROM memberships_by_user WHERE tenant_id = ? AND user_id = ? AND application_id = ? AND conversation_id = ?'),
  userList: cql('SELECT conversation_id, type, role FROM memberships_by_user WHERE tenant_id = ? AND user_id = ? AND application_id = ?'),
  tenantInsert: cql('INSERT INTO active_members_by_tenant (tenant_id, user_id, conversation_id) VALUES (?, ?, ?)'),
  tenantDelete: cql('DELETE FROM active_members_by_tenant WHERE tenant_id = ? AND user_id = ? AND conversation_id = ?'),
  tenantUsers: cql('SELECT user_id FROM active_members_by_tenant WHERE tenant_id = ?'),
};

type Conv = Pick<ConversationRecord, 'conversation_id' | 'tenant_id' | 'application_id' | 'type'>;

export function toMember(row: Row): MemberRecord {
  return {
    member_id: str(row, 'member_id'),
    conversation_id: str(row, 'conversation_id'),
    user_id: str(row, 'user_id'),
    role: str(row, 'role') as MemberRole,
    status: str(row, 'status') as MemberStatus,
    joined_at: time(row, 'joined_at'),
    updated_at: time(row, 'updated_at'),
  };
}

/** Writes making `m` an ACTIVE member; `previous` is its old row when it is reactivated. */
export function activateRows(conv: Conv, m: MemberRecord, previous: MemberRecord | null): Mutation[] {
  const id = conv.conversation_id;
  const rows: Mutation[] = [
    [MEMBERS_CQL.upsert, [m.member_id, id, m.user_id, m.role, 'ACTIVE', ts(m.joined_at), ts(m.updated_at)]],
    [MEMBERS_CQL.joinInsert, [id, ts(m.joined_at), m.member_id, m.user_id]],
    [MEMBERS_CQL.userInsert, [conv.tenant_id, m.user_id, conv.application_id, id, conv.type, m.role]],
    [MEMBERS_CQL.tenantInsert, [conv.tenant_id, m.user_id, id]],
  ];
  if (previous && previous.joined_at !== m.joined_at) rows.push([MEMBERS_CQL.joinDelete, [id, ts(previous.joined_at), previous.member_id]]);
  return rows;
}

/** Writes ending an ACTIVE membership (LEFT, REMOVED). */
export function deactivateRows(conv: Conv, user_id: string, status: MemberStatus, at: string): Mutation[] {
  return [[MEMBERS_CQL.setStatus, [status, ts(at), conv.conversation_id, user_id]], ...unlistRows(conv, user_id)];
}

/** Removes a member from the per-user and per-tenant tables (membership ended, conversation deleted). */
export function unlistRows(conv: Conv, user_id: string): Mutation[] {
  return [
    [MEMBERS_CQL.userDelete, [conv.tenant_id, user_id, conv.application_id, conv.conversation_id]],
    [MEMBERS_CQL.tenantDelete, [conv.tenant_id, user_id, conv.conversation_id]],
  ];
}

export function roleRows(conv: Conv, user_id: string, role: MemberRole, at: string): Mutation[] {
  return [
    [MEMBERS_CQL.setRole, [role, ts(at), conv.conversation_id, user_id]],
    [MEMBERS_CQL.userInsert, [conv.tenant_id, user_id, conv.application_id, conv.conversation_id, conv.type, role]],
  ];
}

export class MembersTable {
  constructor(private readonly h: CassandraHandle) {}

  async get(conversation_id: string, user_id: string): Promise<MemberRecord | null> {
    const row = await this.h.row(MEMBERS_CQL.get, [conversation_id, user_id]);
    return row ? toMember(row) : null;
  }

  async getMany(conversation_id: string, user_ids: readonly string[]): Promise<MemberRecord[]> {
    if (user_ids.length === 0) return [];
    return (await this.h.rows(MEMBERS_CQL.getMany, [conversation_id, [...new Set(user_ids)]])).map(toMember);
  }

  /** Users of every member row with their status (soft delete cleanup, DIRECT pair). */
  async all(conversation_id: string): Promise<Array<{ user_id: string; status: MemberStatus }>> {
    return (await this.h.rows(MEMBERS_CQL.all, [conversation_id])).map((r) => ({ user_id: str(r, 'user_id'), status: str(r, 'status') as MemberStatus }));
  }

  /**
   * Members in (joined_at, member_id) order after `after`, `n` at most, read from the order
   * table and confirmed against `members` (a join key left by a lost move is skipped).
   */
  async page(conversation_id: string, activeOnly: boolean, after: MemberPosition | null, n: number): Promise<MemberRecord[]> {
    const out: MemberRecord[] = [];
    let cursor = after;
    const chunk = Math.min(Math.max(n, 16), 1000);
    for (;;) {
      const keys = cursor
        ? await this.h.rows(MEMBERS_CQL.joinPageAfter, [conversation_id, ts(cursor.joined_at), cursor.member_id, chunk])
        : await this.h.rows(MEMBERS_CQL.joinPage, [conversation_id, chunk]);
      const byUser = new Map((await this.getMany(conversation_id, keys.map((k) => str(k, 'user_id')))).map((m) => [m.user_id, m]));
      for (const k of keys) {
        const m = byUser.get(str(k, 'user_id'));
        const current = m && m.member_id === str(k, 'member_id') && m.joined_at === time(k, 'joined_at');
        if (current && (!activeOnly || m.status === 'ACTIVE')) out.push(m);
        if (out.length >= n) return out;
      }
      if (keys.length < chunk) return out;
      const last = keys[keys.length - 1]!;
      cursor = { joined_at: time(last, 'joined_at'), member_id: str(last, 'member_id') };
    }
  }

  /** The user's ACTIVE memberships in a context, as listed (callers confirm the conversations). */
  async ofUser(ctx: StoreContext, user_id: string): Promise<Array<{ conversation_id: string; type: ConversationType; role: MemberRole }>> {
    const rows = await this.h.rows(MEMBERS_CQL.userList, [ctx.tenant_id, user_id, ctx.application_id]);
    return rows.map((r) => ({ conversation_id: str(r, 'conversation_id'), type: str(r, 'type') as ConversationType, role: str(r, 'role') as MemberRole }));
  }

  async activeUsersOfTenant(tenant_id: string): Promise<number> {
    return new Set((await this.h.rows(MEMBERS_CQL.tenantUsers, [tenant_id])).map((r) => str(r, 'user_id'))).size;
  }
}
