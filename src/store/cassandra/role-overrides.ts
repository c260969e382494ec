/**
 * The `role_overrides` table and the RoleOverrideStore: one partition per mapping (tenant,
 * application; '' for tenant-wide, answered as null), clustered by role_id, so a list is one
 * partition read already in role order. delete reads first to answer whether one existed (a plain
 * DELETE answers nothing; an LWT delete mixed with plain inserts risks timestamp skew).
 */
import type { RoleOverride } from '../records.ts';
import { timestampOrNow } from '../positions.ts';
import type { RoleOverrideStore } from '../types-tenant.ts';
import { cql, type CassandraHandle, type Row } from './cql.ts';
import { parseJsonColumn, str, time, ts } from './rows.ts';

const TENANT_WIDE = '';
const COLUMNS = 'tenant_id, application_id, role_id, capabilities, updated_at';

export const ROLE_OVERRIDES_CQL = {
  list: cql(`SELECT ${COLUMNS} FROM role_overrides WHERE tenant_id = ? AND application_id = ?`),
  get: cql('SELECT role_id FROM role_overrides WHERE tenant_id = ? AND application_id = ? AND role_id = ?'),
  set: cql(`INSERT INTO role_overrides (${COLUMNS}) VALUES (?, ?, ?, ?, ?)`),
  delete: cql('DELETE FROM role_overrides WHERE tenant_id = ? AND application_id = ? AND role_id = ?'),
};

function scope(application_id: string | null): string {
  if (application_id === TENANT_WIDE) throw new RangeError('application_id must be null (tenant-wide) or a non-empty id');
  return application_id ?? TENANT_WIDE;
}

function toRecord(row: Row): RoleOverride {
  const app = str(row, 'application_id');
  return {
    tenant_id: str(row, 'tenant_id'),
    application_id: app === TENANT_WIDE ? null : app,
    role_id: str(row, 'role_id'),
    capabilities: parseJsonColumn<string[]>(row, 'capabilities', []),
    updated_at: time(row, 'updated_at'),
  };
}

export class CassandraRoleOverrideStore implements RoleOverrideStore {
  constructor(private readonly h: CassandraHandle) {}

  async list(tenant_id: string, application_id: string | null): Promise<RoleOverride[]> {
    const app = scope(application_id);
    return this.h.op(async () => (await this.h.rows(ROLE_OVERRIDES_CQL.list, [tenant_id, app])).map(toRecord));
  }

  async set(tenant_id: string, application_id: string | null, role_id: string, capabilities: readonly string[], at?: string): Promise<RoleOverride> {
    const app = scope(application_id);
    const caps = [...new Set(capabilities)].sort();
    const when = timestampOrNow(at);
    return this.h.serial(`roles:${tenant_id}:${app}`, async () => {
      await this.h.rows(ROLE_OVERRIDES_CQL.set, [tenant_id, app, role_id, JSON.stringify(caps), ts(when)]);
      return { tenant_id, application_id: app === TENANT_WIDE ? null : app, role_id, capabilities: caps, updated_at: when };
    });
  }

  async delete(tenant_id: string, application_id: string | null, role_id: string): Promise<boolean> {
    const app = scope(application_id);
    return this.h.serial(`roles:${tenant_id}:${app}`, async () => {
      if (!(await this.h.row(ROLE_OVERRIDES_CQL.get, [tenant_id, app, role_id]))) return false;
      await this.h.rows(ROLE_OVERRIDES_CQL.delete, [tenant_id, app, role_id]);
      return true;
    });
  }
}
