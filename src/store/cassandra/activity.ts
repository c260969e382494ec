/**
 * The denormalized listing tables: conversations_by_activity (machine listing),
 * conversations_by_type_activity (with a type filter), public_channels_by_activity (the PUBLIC
 * channel half of a user's listing), and conversations_by_tenant (overview counts).
 *
 * The activity key (last_activity_at, conversation_id) is a clustering key, so when activity
 * moves the row is moved: DELETE the old key and INSERT the new one, in one logged batch with
 * the other tables' moves. Stale rows are avoided twice over:
 *  - the old key deleted is exactly the one replaced: the append's LWT changes last_seq and
 *    last_activity_at only from the values the writer read (`IF last_seq = :read`), so two
 *    writers never both "move" from one key;
 *  - a logged batch is applied entirely once written to the batchlog, even if the coordinator
 *    dies; and if the batch itself was never written (the process died between the LWT and the
 *    batch), readers check every listed key against the conversation row (`verifyKey`) and skip,
 *    then delete, keys that are not the conversation's current one.
 */
import type { ConversationRecord, ConversationType, StoreContext } from '../records.ts';
import type { ConversationPosition } from '../positions.ts';
import { cql, type CassandraHandle, type Cql } from './cql.ts';
import { str, time, ts } from './rows.ts';

const CTX = 'tenant_id = ? AND application_id = ?';
const KEY = 'last_activity_at = ? AND conversation_id = ?';
const AFTER = '(last_activity_at, conversation_id) < (?, ?)';

export const ACTIVITY_CQL = {
  insertAll: cql('INSERT INTO conversations_by_activity (tenant_id, application_id, last_activity_at, conversation_id) VALUES (?, ?, ?, ?)'),
  deleteAll: cql(`DELETE FROM conversations_by_activity WHERE ${CTX} AND ${KEY}`),
  pageAll: cql(`SELECT last_activity_at, conversation_id FROM conversations_by_activity WHERE ${CTX} LIMIT ?`),
  pageAllAfter: cql(`SELECT last_activity_at, conversation_id FROM conversations_by_activity WHERE ${CTX} AND ${AFTER} LIMIT ?`),
  insertTyped: cql('INSERT INTO conversations_by_type_activity (tenant_id, application_id, type, last_activity_at, conversation_id) VALUES (?, ?, ?, ?, ?)'),
  deleteTyped: cql(`DELETE FROM conversations_by_type_activity WHERE ${CTX} AND type = ? AND ${KEY}`),
  pageTyped: cql(`SELECT last_activity_at, conversation_id FROM conversations_by_type_activity WHERE ${CTX} AND type = ? LIMIT ?`),
  pageTypedAfter: cql(`SELECT last_activity_at, conversation_id FROM conversations_by_type_activity WHERE ${CTX} AND type = ? AND ${AFTER} LIMIT ?`),
  insertPublic: cql('INSERT INTO public_channels_by_activity (tenant_id, application_id, last_activity_at, conversation_id) VALUES (?, ?, ?, ?)'),
  deletePublic: cql(`DELETE FROM public_channels_by_activity WHERE ${CTX} AND ${KEY}`),
  pagePublic: cql(`SELECT last_activity_at, conversation_id FROM public_channels_by_activity WHERE ${CTX} LIMIT ?`),
  pagePublicAfter: cql(`SELECT last_activity_at, conversation_id FROM public_channels_by_activity WHERE ${CTX} AND ${AFTER} LIMIT ?`),
  insertTenant: cql('INSERT INTO conversations_by_tenant (tenant_id, application_id, conversation_id, type) VALUES (?, ?, ?, ?)'),
  deleteTenant: cql('DELETE FROM conversations_by_tenant WHERE tenant_id = ? AND application_id = ? AND conversation_id = ?'),
  typesOfTenant: cql('SELECT type FROM conversations_by_tenant WHERE tenant_id = ?'),
};

export type Mutation = readonly [Cql, unknown[]];
type Conv = Pick<ConversationRecord, 'tenant_id' | 'application_id' | 'conversation_id' | 'type' | 'visibility'>;

export function isPublicChannel(c: Pick<ConversationRecord, 'type' | 'visibility'>): boolean {
  return c.type === 'CHANNEL' && c.visibility === 'PUBLIC';
}

/** The listing rows of `c` under activity key `at`. */
export function indexRows(c: Conv, at: string): Mutation[] {
  const t = ts(at);
  const rows: Mutation[] = [
    [ACTIVITY_CQL.insertAll, [c.tenant_id, c.application_id, t, c.conversation_id]],
    [ACTIVITY_CQL.insertTyped, [c.tenant_id, c.application_id, c.type, t, c.conversation_id]],
  ];
  if (isPublicChannel(c)) rows.push([ACTIVITY_CQL.insertPublic, [c.tenant_id, c.application_id, t, c.conversation_id]]);
  return rows;
}

/** Deletes of the listing rows of `c` under key `at` (public row included whether or not it exists). */
export function unindexRows(c: Conv, at: string): Mutation[] {
  const t = ts(at);
  return [
    [ACTIVITY_CQL.deleteAll, [c.tenant_id, c.application_id, t, c.conversation_id]],
    [ACTIVITY_CQL.deleteTyped, [c.tenant_id, c.application_id, c.type, t, c.conversation_id]],
    [ACTIVITY_CQL.deletePublic, [c.tenant_id, c.application_id, t, c.conversation_id]],
  ];
}

/** Moving a conversation from key `from` to key `to` (an append, a visibility change). */
export function moveRows(before: Conv, after: Conv, from: string, to: string): Mutation[] {
  return [...unindexRows(before, from), ...indexRows(after, to)];
}

export function tenantRow(c: Conv): Mutation {
  return [ACTIVITY_CQL.insertTenant, [c.tenant_id, c.application_id, c.conversation_id, c.type]];
}

export function untenantRow(c: Conv): Mutation {
  return [ACTIVITY_CQL.deleteTenant, [c.tenant_id, c.application_id, c.conversation_id]];
}

export type ActivityKind = { kind: 'all' } | { kind: 'typed'; type: ConversationType } | { kind: 'public' };

/** Reads listing keys in page order after `after`; `n` rows at most. */
export async function readKeys(h: CassandraHandle, ctx: StoreContext, which: ActivityKind, after: ConversationPosition | null, n: number): Promise<ConversationPosition[]> {
  const base: unknown[] = which.kind === 'typed' ? [ctx.tenant_id, ctx.application_id, which.type] : [ctx.tenant_id, ctx.application_id];
  const stmts = {
    all: [ACTIVITY_CQL.pageAll, ACTIVITY_CQL.pageAllAfter],
    typed: [ACTIVITY_CQL.pageTyped, ACTIVITY_CQL.pageTypedAfter],
    public: [ACTIVITY_CQL.pagePublic, ACTIVITY_CQL.pagePublicAfter],
  }[which.kind] as [Cql, Cql];
  const rows = after
    ? await h.rows(stmts[1], [...base, ts(after.last_activity_at), after.conversation_id, n])
    : await h.rows(stmts[0], [...base, n]);
  return rows.map((r) => ({ last_activity_at: time(r, 'last_activity_at'), conversation_id: str(r, 'conversation_id') }));
}
