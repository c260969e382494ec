/**
 * The `profiles` and `profile_search` tables, and the ProfileStore.
 *
 * Prefix search: every profile has a search row for its lower-cased user id and one for its
 * lower-cased display name, in partition (tenant_id, first character of the key), clustered by
 * key. A search for `p` is then one clustering range `key >= p AND key < successor(p)` of one
 * partition: exact prefix semantics in code point order (Cassandra compares text as UTF-8 bytes),
 * no LIKE (which needs a SASI/SAI index) and no wildcard escaping. Partitioning by first
 * character keeps a large tenant's search rows in many bounded partitions.
 *
 * Upserts read the stored rows first (one IN query) to apply the idp/hint rules and skip rows that
 * would not change; a display name change moves its search row (delete + insert, one batch).
 * Concurrent upserts of one user are last-write-wins per column, as profile data may be.
 */
import type { ProfileRecord } from '../records.ts';
import { timestampOrNow } from '../positions.ts';
import type { ProfileInput, ProfileStore } from '../types-tenant.ts';
import type { Mutation } from './activity.ts';
import { cql, type CassandraHandle } from './cql.ts';
import { str, strOrNull, time, ts } from './rows.ts';
import { checkSearch, prefixSuccessor, searchKey } from '../inputs.ts';

const COLUMNS = 'tenant_id, user_id, display_name, avatar_url, updated_at';

export const PROFILES_CQL = {
  get: cql(`SELECT ${COLUMNS} FROM profiles WHERE tenant_id = ? AND user_id IN ?`),
  upsert: cql(`INSERT INTO profiles (${COLUMNS}) VALUES (?, ?, ?, ?, ?)`),
  searchInsert: cql('INSERT INTO profile_search (tenant_id, head, search_key, user_id) VALUES (?, ?, ?, ?)'),
  searchDelete: cql('DELETE FROM profile_search WHERE tenant_id = ? AND head = ? AND search_key = ? AND user_id = ?'),
  search: cql('SELECT user_id FROM profile_search WHERE tenant_id = ? AND head = ? AND search_key >= ? AND search_key < ? LIMIT ?'),
};

/** The partition of a key: its first code point. */
export function headOf(key: string): string {
  return Array.from(key)[0] ?? '';
}

function toProfile(row: Readonly<Record<string, unknown>>): ProfileRecord {
  return {
    tenant_id: str(row, 'tenant_id'),
    user_id: str(row, 'user_id'),
    display_name: strOrNull(row, 'display_name'),
    avatar_url: strOrNull(row, 'avatar_url'),
    updated_at: time(row, 'updated_at'),
  };
}

function searchRow(tenant_id: string, key: string, user_id: string, insert: boolean): Mutation[] {
  if (key === '') return [];
  return [[insert ? PROFILES_CQL.searchInsert : PROFILES_CQL.searchDelete, [tenant_id, headOf(key), key, user_id]]];
}

export class CassandraProfileStore implements ProfileStore {
  constructor(private readonly h: CassandraHandle) {}

  async upsert(tenant_id: string, profiles: readonly ProfileInput[], source: 'idp' | 'hint', at?: string): Promise<void> {
    if (source !== 'idp' && source !== 'hint') throw new RangeError(`unknown profile source ${String(source)}`);
    const when = timestampOrNow(at);
    return this.h.serial(`profiles:${tenant_id}`, async () => {
      if (profiles.length === 0) return;
      const stored = new Map((await this.read(tenant_id, profiles.map((p) => p.user_id))).map((p) => [p.user_id, p]));
      const writes: Array<Promise<void>> = [];
      for (const p of profiles) {
        const old = stored.get(p.user_id);
        const next =
          source === 'idp' || !old
            ? { display_name: p.display_name, avatar_url: p.avatar_url }
            : { display_name: old.display_name ?? p.display_name, avatar_url: old.avatar_url ?? p.avatar_url };
        if (old && old.display_name === next.display_name && old.avatar_url === next.avatar_url) continue;
        const rows: Mutation[] = [[PROFILES_CQL.upsert, [tenant_id, p.user_id, next.display_name, next.avatar_url, ts(when)]]];
        if (!old) rows.push(...searchRow(tenant_id, searchKey(p.user_id), p.user_id, true));
        if (old?.display_name !== next.display_name) {
          if (old?.display_name != null) rows.push(...searchRow(tenant_id, searchKey(old.display_name), p.user_id, false));
          if (next.display_name !== null) rows.push(...searchRow(tenant_id, searchKey(next.display_name), p.user_id, true));
        }
        writes.push(this.h.batch(rows));
      }
      await Promise.all(writes);
    });
  }

  async get(tenant_id: string, user_ids: readonly string[]): Promise<ProfileRecord[]> {
    return this.h.op(() => this.read(tenant_id, user_ids));
  }

  /** Without the closed check: for other stores' reads (senders, member previews). */
  async read(tenant_id: string, user_ids: readonly string[]): Promise<ProfileRecord[]> {
    if (user_ids.length === 0) return [];
    return (await this.h.rows(PROFILES_CQL.get, [tenant_id, [...new Set(user_ids)]])).map(toProfile);
  }

  async search(tenant_id: string, prefix: string, limit: number): Promise<ProfileRecord[]> {
    const lo = checkSearch(prefix, limit);
    return this.h.op(async () => {
      // A user has at most two search rows, so 2 * limit rows hold `limit` distinct users if
      // that many match.
      const rows = await this.h.rows(PROFILES_CQL.search, [tenant_id, headOf(lo), lo, prefixSuccessor(lo), 2 * limit]);
      const ids = [...new Set(rows.map((r) => str(r, 'user_id')))];
      const found = await this.read(tenant_id, ids);
      return found.sort((a, b) => (a.user_id < b.user_id ? -1 : a.user_id > b.user_id ? 1 : 0)).slice(0, limit);
    });
  }
}
