/**
 * The `tenant_settings` table and the SettingsStore. A tenant without a row has the defaults
 * (keep messages forever), so nothing has to be written when a tenant first appears.
 */
import type { TenantSettings } from '../records.ts';
import { timestampOrNow } from '../positions.ts';
import type { SettingsStore } from '../types-tenant.ts';
import type { SqliteHandle } from './shared.ts';

export class SqliteSettingsStore implements SettingsStore {
  private readonly getStmt;
  private readonly upsertStmt;
  private readonly retentionStmt;

  constructor(private readonly h: SqliteHandle) {
    const db = h.db;
    this.getStmt = db.prepare<[string], TenantSettings>('SELECT tenant_id, message_retention_days, updated_at FROM tenant_settings WHERE tenant_id = ?');
    this.upsertStmt = db.prepare<[Record<string, string | number | null>], TenantSettings>(`INSERT INTO tenant_settings
        (tenant_id, message_retention_days, updated_at) VALUES (:tenant_id, :days, :at)
      ON CONFLICT (tenant_id) DO UPDATE SET
        message_retention_days = CASE WHEN :set_days THEN excluded.message_retention_days ELSE message_retention_days END,
        updated_at = excluded.updated_at
      RETURNING tenant_id, message_retention_days, updated_at`);
    this.retentionStmt = db.prepare<[], { tenant_id: string; message_retention_days: number }>(
      'SELECT tenant_id, message_retention_days FROM tenant_settings WHERE message_retention_days IS NOT NULL ORDER BY tenant_id',
    );
  }

  async get(tenant_id: string): Promise<TenantSettings> {
    return this.h.read(() => this.getStmt.get(tenant_id) ?? { tenant_id, message_retention_days: null, updated_at: null });
  }

  async update(tenant_id: string, patch: { message_retention_days?: number | null }, at?: string): Promise<TenantSettings> {
    const setDays = patch.message_retention_days !== undefined;
    const days = patch.message_retention_days ?? null;
    if (days !== null && (!Number.isSafeInteger(days) || days < 1)) throw new RangeError(`message_retention_days must be an integer >= 1 or null (got ${days})`);
    const when = timestampOrNow(at);
    return this.h.write(() => this.upsertStmt.get({ tenant_id, days, at: when, set_days: setDays ? 1 : 0 })!);
  }

  async listRetention(): Promise<Array<{ tenant_id: string; message_retention_days: number }>> {
    return this.h.read(() => this.retentionStmt.all());
  }
}
