/**
 * The `profiles` table (known users per tenant) and the ProfileStore.
 *
 * Prefix search is two index ranges, `key >= prefix AND key < successor(prefix)`, over the
 * lower-cased user_key and name_key: an exact prefix match that uses the indexes whatever the
 * characters (LIKE would need NOCASE, which only folds ASCII, and escaping of % and _).
 */
import type { ProfileRecord } from '../records.ts';
import { timestampOrNow } from '../positions.ts';
import type { ProfileInput, ProfileStore } from '../types-tenant.ts';
import { jsonList, type Db, type SqliteHandle } from './shared.ts';
import { checkSearch, prefixSuccessor, searchKey } from '../inputs.ts';
import { TriggerMemo } from './trigger-memo.ts';

/**
 * The memo of single profiles for exclusive mode (the sender's profile is read on every send),
 * dropped at any change of that row. `db` null: no triggers, invalidated through `touch` (the
 * writer thread's reports).
 */
export function memoizeProfiles(db: Db | null, onTouch?: (fn: string, group: string) => void): TriggerMemo<ProfileRecord | null> {
  return new TriggerMemo(db, { fn: 'chat_profiles_touch', tables: ['profiles'], group: (row) => `${row}.tenant_id || char(31) || ${row}.user_id` }, 100_000, 1, onTouch);
}

const COLUMNS = 'tenant_id, user_id, display_name, avatar_url, updated_at';

export const SEARCH_SQL = `SELECT * FROM (SELECT ${COLUMNS} FROM profiles
    WHERE tenant_id = :tenant_id AND user_key >= :lo AND user_key < :hi ORDER BY user_key LIMIT :n)
  UNION
  SELECT * FROM (SELECT ${COLUMNS} FROM profiles
    WHERE tenant_id = :tenant_id AND name_key >= :lo AND name_key < :hi ORDER BY name_key LIMIT :n)
  ORDER BY user_id LIMIT :n`;

export class SqliteProfileStore implements ProfileStore {
  private readonly idpStmt;
  private readonly hintStmt;
  private readonly getStmt;
  private readonly getOneStmt;
  private readonly searchStmt;

  /** `memo`: single profiles kept in memory until their row changes (exclusive mode; trigger-memo.ts). */
  constructor(
    private readonly h: SqliteHandle,
    private readonly memo: TriggerMemo<ProfileRecord | null> | null = null,
  ) {
    const db: Db = h.db;
    const insert = `INSERT INTO profiles (tenant_id, user_id, display_name, avatar_url, user_key, name_key, updated_at)
      VALUES (:tenant_id, :user_id, :display_name, :avatar_url, :user_key, :name_key, :at) ON CONFLICT (tenant_id, user_id) DO UPDATE SET`;
    // The WHERE clauses skip rewriting a row that would not change (no WAL churn on every login).
    this.idpStmt = db.prepare<[Record<string, string | null>]>(`${insert}
        display_name = excluded.display_name, avatar_url = excluded.avatar_url, name_key = excluded.name_key, updated_at = excluded.updated_at
      WHERE display_name IS NOT excluded.display_name OR avatar_url IS NOT excluded.avatar_url`);
    this.hintStmt = db.prepare<[Record<string, string | null>]>(`${insert}
        display_name = coalesce(display_name, excluded.display_name), avatar_url = coalesce(avatar_url, excluded.avatar_url),
        name_key = coalesce(name_key, excluded.name_key), updated_at = excluded.updated_at
      WHERE (display_name IS NULL AND excluded.display_name IS NOT NULL) OR (avatar_url IS NULL AND excluded.avatar_url IS NOT NULL)`);
    // One user (a sender's profile on every send): a primary-key read, no transaction around it.
    this.getOneStmt = db.prepare<[string, string], ProfileRecord>(`SELECT ${COLUMNS} FROM profiles WHERE tenant_id = ? AND user_id = ?`);
    this.getStmt = db.prepare<[string, string], ProfileRecord>(
      `SELECT ${COLUMNS} FROM profiles WHERE tenant_id = ? AND user_id IN (SELECT value FROM json_each(?))`,
    );
    this.searchStmt = db.prepare<[Record<string, string | number>], ProfileRecord>(SEARCH_SQL);
  }

  async upsert(tenant_id: string, profiles: readonly ProfileInput[], source: 'idp' | 'hint', at?: string): Promise<void> {
    if (source !== 'idp' && source !== 'hint') throw new RangeError(`unknown profile source ${String(source)}`);
    const when = timestampOrNow(at);
    if (profiles.length === 0) return;
    const stmt = source === 'idp' ? this.idpStmt : this.hintStmt;
    await this.h.write(() => {
      for (const p of profiles) {
        stmt.run({
          tenant_id,
          user_id: p.user_id,
          display_name: p.display_name,
          avatar_url: p.avatar_url,
          user_key: searchKey(p.user_id),
          name_key: p.display_name === null ? null : searchKey(p.display_name),
          at: when,
        });
      }
    });
  }

  async get(tenant_id: string, user_ids: readonly string[]): Promise<ProfileRecord[]> {
    if (user_ids.length === 0) return [];
    if (user_ids.length === 1) {
      const one = user_ids[0]!;
      const memo = this.memo;
      return this.h.readOne(() => {
        const read = (): ProfileRecord | null => this.getOneStmt.get(tenant_id, one) ?? null;
        const row = memo === null ? read() : memo.get(`${tenant_id}\u001f${one}`, '', () => {
          const r = read();
          return r === null ? null : Object.freeze(r);
        });
        return row === null ? [] : [row];
      });
    }
    return this.h.read(() => this.getStmt.all(tenant_id, jsonList(user_ids)));
  }

  async search(tenant_id: string, prefix: string, limit: number): Promise<ProfileRecord[]> {
    const lo = checkSearch(prefix, limit);
    return this.h.read(() => this.searchStmt.all({ tenant_id, lo, hi: prefixSuccessor(lo), n: limit }));
  }
}
