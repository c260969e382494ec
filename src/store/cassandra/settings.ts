/**
 * The `tenant_settings` table (+ `retention_tenants`, the retention job's work list in one small
 * partition, so listing it is not a scan of every tenant) and the SettingsStore. A tenant
 * without a row has the defaults (keep messages forever). Updates of one tenant run in call order
 * through the handle's queue; the two tables are written in one logged batch.
 */
import type { TenantSettings } from '../records.ts';
import { timestampOrNow } from '../positions.ts';
import type { SettingsStore } from '../types-tenant.ts';
import { cql, type CassandraHandle } from './cql.ts';
import { num, numOrNull, str, timeOrNull, ts } from './rows.ts';

/** The one partition of retention_tenants. */
const ALL = 'all';

export const SETTINGS_CQL = {
  get: cql('SELECT tenant_id, message_retention_days, updated_at FROM tenant_settings WHERE tenant_id = ?'),
  upsert: cql('INSERT INTO tenant_settings (tenant_id, message_retention_days, updated_at) VALUES (?, ?, ?)'),
  retentionSet: cql('INSERT INTO retention_tenants (scope, tenant_id, message_retention_days) VALUES (?, ?, ?)'),
  retentionDelete: cql('DELETE FROM retention_tenants WHERE scope = ? AND tenant_id = ?'),
  retentionList: cql('SELECT tenant_id, message_retention_days FROM retention_tenants WHERE scope = ?'),
};

export class CassandraSettingsStore implements SettingsStore {
  constructor(private readonly h: CassandraHandle) {}

  async get(tenant_id: string): Promise<TenantSettings> {
    return this.h.op(() => this.read(tenant_id));
  }

  async update(tenant_id: string, patch: { message_retention_days?: number | null }, at?: string): Promise<TenantSettings> {
    const setDays = patch.message_retention_days !== undefined;
    const days = patch.message_retention_days ?? null;
    if (days !== null && (!Number.isSafeInteger(days) || days < 1)) throw new RangeError(`message_retention_days must be an integer >= 1 or null (got ${days})`);
    const when = timestampOrNow(at);
    return this.h.serial(`settings:${tenant_id}`, async () => {
      const stored = await this.read(tenant_id);
      const next = setDays ? days : stored.message_retention_days;
      await this.h.batch([
        [SETTINGS_CQL.upsert, [tenant_id, next, ts(when)]],
        next === null ? [SETTINGS_CQL.retentionDelete, [ALL, tenant_id]] : [SETTINGS_CQL.retentionSet, [ALL, tenant_id, next]],
      ]);
      return { tenant_id, message_retention_days: next, updated_at: when };
    });
  }

  async listRetention(): Promise<Array<{ tenant_id: string; message_retention_days: number }>> {
    return this.h.op(async () =>
      (await this.h.rows(SETTINGS_CQL.retentionList, [ALL])).map((r) => ({ tenant_id: str(r, 'tenant_id'), message_retention_days: num(r, 'message_retention_days') })),
    );
  }

  private async read(tenant_id: string): Promise<TenantSettings> {
    const row = await this.h.row(SETTINGS_CQL.get, [tenant_id]);
    return { tenant_id, message_retention_days: row ? numOrNull(row, 'message_retention_days') : null, updated_at: row ? timeOrNull(row, 'updated_at') : null };
  }
}
