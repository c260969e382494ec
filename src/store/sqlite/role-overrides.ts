/**
 * The `role_overrides` table and the RoleOverrideStore: per tenant (and optionally per
 * application) replacements of a role's capability list from the IdP catalog. The tenant-wide
 * mapping is stored under application_id '' (see 001_init.sql) and answered as null.
 */
import type { RoleOverride } from '../records.ts';
import { timestampOrNow } from '../positions.ts';
import type { RoleOverrideStore } from '../types-tenant.ts';
import { parseJson, type SqliteHandle } from './shared.ts';

type Row = Omit<RoleOverride, 'capabilities'> & { capabilities: string };

const TENANT_WIDE = '';

function toRecord(row: Row): RoleOverride {
  const { application_id, capabilities, ...rest } = row;
  return { application_id: application_id === TENANT_WIDE ? null : application_id, capabilities: parseJson<string[]>(capabilities), ...rest };
}

function scope(application_id: string | null): string {
  if (application_id === TENANT_WIDE) throw new RangeError('application_id must be null (tenant-wide) or a non-empty id');
  return application_id ?? TENANT_WIDE;
}

export class SqliteRoleOverrideStore implements RoleOverrideStore {
  private readonly listStmt;
  private readonly setStmt;
  private readonly deleteStmt;

  constructor(private readonly h: SqliteHandle) {
    const db = h.db;
    const cols = 'tenant_id, application_id, role_id, capabilities, updated_at';
    this.listStmt = db.prepare<[string, string], Row>(`SELECT ${cols} FROM role_overrides WHERE tenant_id = ? AND application_id = ? ORDER BY role_id`);
    this.setStmt = db.prepare<[string, string, string, string, string], Row>(`INSERT INTO role_overrides (${cols}) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT DO UPDATE SET capabilities = excluded.capabilities, updated_at = excluded.updated_at RETURNING ${cols}`);
    this.deleteStmt = db.prepare<[string, string, string]>('DELETE FROM role_overrides WHERE tenant_id = ? AND application_id = ? AND role_id = ?');
  }

  async list(tenant_id: string, application_id: string | null): Promise<RoleOverride[]> {
    const app = scope(application_id);
    return this.h.read(() => this.listStmt.all(tenant_id, app).map(toRecord));
  }

  async set(tenant_id: string, application_id: string | null, role_id: string, capabilities: readonly string[], at?: string): Promise<RoleOverride> {
    const app = scope(application_id);
    const caps = JSON.stringify([...new Set(capabilities)].sort());
    const when = timestampOrNow(at);
    return this.h.write(() => toRecord(this.setStmt.get(tenant_id, app, role_id, caps, when)!));
  }

  async delete(tenant_id: string, application_id: string | null, role_id: string): Promise<boolean> {
    const app = scope(application_id);
    return this.h.write(() => this.deleteStmt.run(tenant_id, app, role_id).changes > 0);
  }
}
