/**
 * The `push_devices` table and the PushDeviceStore. Keyed by (tenant_id, token_or_endpoint): a
 * subscription endpoint or native token identifies one device, so re-registering it is an
 * update, never a second row (no duplicate pushes to one browser).
 */
import type { PushDevice } from '../records.ts';
import { timestampOrNow } from '../positions.ts';
import { checkPushDevice } from '../inputs.ts';
import type { PushDeviceInput, PushDeviceStore } from '../types-tenant.ts';
import { jsonList, type Db, type SqliteHandle } from './shared.ts';
import { TriggerMemo } from './trigger-memo.ts';

/** The memo group of a user's devices; the triggers compute the same text in SQL. */
const deviceGroup = (tenant_id: string, user_id: string): string => `${tenant_id}\u001f${user_id}`;

/**
 * The memo of each user's devices for exclusive mode, dropped at any change of push_devices rows.
 * `db` null: no triggers, invalidated through `touch` (the writer thread's reports).
 */
export function memoizeDevices(db: Db | null, onTouch?: (fn: string, group: string) => void): TriggerMemo<readonly PushDevice[]> {
  return new TriggerMemo(db, { fn: 'chat_devices_touch', tables: ['push_devices'], group: (row) => `${row}.tenant_id || char(31) || ${row}.user_id` }, 100_000, 1, onTouch);
}

/**
 * SQLite's BINARY order of TEXT, the order of the UTF-8 bytes, which is code point order: the
 * UTF-16 code units compared as they are, except that surrogates (code points above U+FFFF) sort
 * after U+E000..U+FFFF. No Buffer per comparison (sorting a GROUP's candidates on every push job
 * allocated two per comparison).
 */
export function utf8Order(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i += 1) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) return (x >= 0xe000 ? x - 0x800 : x + 0x2000) - (y >= 0xe000 ? y - 0x800 : y + 0x2000);
    return x - y;
  }
  return a.length - b.length;
}

const COLUMNS = 'tenant_id, user_id, platform, token_or_endpoint, p256dh, auth, created_at, updated_at';

export class SqlitePushDeviceStore implements PushDeviceStore {
  private readonly upsertStmt;
  private readonly deleteStmt;
  private readonly listStmt;
  private readonly userStmt;
  private readonly pruneStmt;

  /**
   * `devices`: a memo of each user's devices (exclusive mode; trigger-memo.ts), so the device
   * lookup of every message's push job is answered from memory until that user's devices change.
   */
  constructor(
    private readonly h: SqliteHandle,
    private readonly devices: TriggerMemo<readonly PushDevice[]> | null = null,
  ) {
    const db = h.db;
    this.upsertStmt = db.prepare<[Record<string, string | null>], PushDevice>(`INSERT INTO push_devices (${COLUMNS})
        VALUES (:tenant_id, :user_id, :platform, :token_or_endpoint, :p256dh, :auth, :at, :at)
      ON CONFLICT (tenant_id, token_or_endpoint) DO UPDATE SET user_id = excluded.user_id, platform = excluded.platform,
        p256dh = excluded.p256dh, auth = excluded.auth, updated_at = excluded.updated_at
      RETURNING ${COLUMNS}`);
    this.deleteStmt = db.prepare<[string, string, string]>('DELETE FROM push_devices WHERE tenant_id = ? AND user_id = ? AND token_or_endpoint = ?');
    // INDEXED BY: without statistics the planner prefers the primary key's tenant prefix and
    // filters every device of the tenant; the per-user index reads only the users asked for.
    this.listStmt = db.prepare<[string, string], PushDevice>(`SELECT ${COLUMNS} FROM push_devices INDEXED BY push_devices_by_user
      WHERE tenant_id = ? AND user_id IN (SELECT value FROM json_each(?)) ORDER BY user_id, created_at, token_or_endpoint`);
    this.userStmt = db.prepare<[string, string], PushDevice>(`SELECT ${COLUMNS} FROM push_devices INDEXED BY push_devices_by_user
      WHERE tenant_id = ? AND user_id = ? ORDER BY created_at, token_or_endpoint`);
    this.pruneStmt = db.prepare<[string]>('DELETE FROM push_devices WHERE token_or_endpoint = ?');
  }

  async upsert(device: PushDeviceInput, at?: string): Promise<PushDevice> {
    const row = { at: timestampOrNow(at), ...checkPushDevice(device) };
    return this.h.write(() => this.upsertStmt.get(row)!);
  }

  async delete(tenant_id: string, user_id: string, token_or_endpoint: string): Promise<boolean> {
    return this.h.write(() => this.deleteStmt.run(tenant_id, user_id, token_or_endpoint).changes > 0);
  }

  async listForUsers(tenant_id: string, user_ids: readonly string[]): Promise<PushDevice[]> {
    if (user_ids.length === 0) return [];
    const devices = this.devices;
    if (devices === null) return this.h.read(() => this.listStmt.all(tenant_id, jsonList(user_ids)));
    // Each user's list from the memo, or one read each (its own snapshot): the same rows in the
    // same order (user, created_at, token) as the one-statement read above.
    return this.h.readOne(() => {
      const out: PushDevice[] = [];
      for (const user_id of [...new Set(user_ids)].sort(utf8Order)) {
        out.push(...devices.get(deviceGroup(tenant_id, user_id), '', () => Object.freeze(this.userStmt.all(tenant_id, user_id).map((d) => Object.freeze(d)))));
      }
      return out;
    });
  }

  async deleteEndpoint(token_or_endpoint: string): Promise<number> {
    return this.h.write(() => this.pruneStmt.run(token_or_endpoint).changes);
  }
}
