/**
 * Users' effective capabilities: the role names the IdP answered, each mapped through the
 * tenant's role-permission overrides (the admin mapping, stored by the service) when one exists
 * for that role, else the capabilities the IdP gives the role. The one place this is computed;
 * checkContext (access.ts) asks here on every user call.
 *
 *   per role held:  application-scoped override  ??  tenant-wide override  ??  IdP role capabilities
 *   effective    =  union over the roles held, sorted
 *
 * Locked roles (tenant_owner) are never overridden (the admin route refuses them): a user holding
 * one keeps the IdP's answer (every catalog key). A role name the IdP's role list does not know
 * contributes nothing once an override applies to another role of the user.
 *
 * Cost on the hot path: a snapshot per (tenant, application) holds the overrides (and, only when
 * there are any, the IdP's role records), cached for the identity freshness bound
 * (CHAT_IDENTITY_CACHE_TTL_MS); results are memoized in it per role set. With the snapshot cached
 * the answer is synchronous; a tenant without overrides gets the IdP's list as it is.
 *
 * Freshness: a PATCH on this node bumps the tenant's generation, so the next call here loads new
 * overrides. Other nodes see the change when their snapshot expires: within
 * CHAT_IDENTITY_CACHE_TTL_MS (role records changed at the IdP: within twice that).
 *
 * Answers are tied to the service that fetched them (`bindResolver`), so checkContext keeps its
 * signature and answers built elsewhere (tests) simply get the IdP's capabilities.
 */
import { FreshCache } from './fresh-cache.ts';
import type { ContextAnswer, RoleRecord } from './types.ts';

/** What the resolver needs from the store (RoleOverrideStore satisfies it). */
export interface OverrideSource {
  list(tenant_id: string, application_id: string | null): Promise<Array<{ role_id: string; capabilities: string[] }>>;
}

export type RoleSource = (tenantId: string, applicationId: string | null) => Promise<RoleRecord[]>;

interface Snapshot {
  tenantWide: ReadonlyMap<string, readonly string[]>;
  app: ReadonlyMap<string, readonly string[]>;
  /** Role records by name; null when no override exists here (the IdP's lists are used as they are). */
  roles: ReadonlyMap<string, RoleRecord> | null;
  memo: Map<string, readonly string[]>;
}

const MAX_SNAPSHOTS = 10_000;
const MAX_MEMO = 1_000;

export class EffectiveCapabilities {
  private source: OverrideSource | null = null;
  private readonly snapshots: FreshCache<Snapshot>;
  private readonly generations = new Map<string, number>();

  constructor(private readonly roles: RoleSource, ttlMs: number) {
    this.snapshots = new FreshCache(ttlMs, MAX_SNAPSHOTS);
  }

  /** Where overrides come from; until set, every user holds what the IdP says. */
  useOverrides(source: OverrideSource): void {
    this.source = source;
  }

  /** Call after changing a tenant's overrides: this node's next call reloads them. */
  invalidate(tenantId: string): void {
    this.generations.set(tenantId, (this.generations.get(tenantId) ?? 0) + 1);
  }

  /**
   * The capabilities held by a user with `roleNames` (sorted) in the tenant, or in the
   * application when `applicationId` is set; `idpCapabilities` is the IdP's answer for them.
   */
  resolve(tenantId: string, applicationId: string | null, roleNames: readonly string[], idpCapabilities: readonly string[]): readonly string[] | Promise<readonly string[]> {
    const source = this.source;
    if (source === null) return idpCapabilities;
    const key = `${tenantId}\u0000${applicationId ?? ''}\u0000${this.generations.get(tenantId) ?? 0}`;
    const snap = this.snapshots.peek(key);
    if (snap !== undefined) return apply(snap, roleNames, idpCapabilities);
    return this.snapshots.get(key, () => this.load(source, tenantId, applicationId)).then((s) => apply(s, roleNames, idpCapabilities));
  }

  private async load(source: OverrideSource, tenantId: string, applicationId: string | null): Promise<Snapshot> {
    const [tenantWide, app] = await Promise.all([source.list(tenantId, null), applicationId === null ? [] : source.list(tenantId, applicationId)]);
    const snap: Snapshot = { tenantWide: byRole(tenantWide), app: byRole(app), roles: null, memo: new Map() };
    if (tenantWide.length === 0 && app.length === 0) return snap;
    const lists = await Promise.all([this.roles(tenantId, null), applicationId === null ? [] : this.roles(tenantId, applicationId)]);
    const roles = new Map<string, RoleRecord>();
    for (const r of lists.flat()) if (!roles.has(r.role)) roles.set(r.role, r);
    return { tenantWide: snap.tenantWide, app: snap.app, roles, memo: snap.memo };
  }
}

function byRole(list: Array<{ role_id: string; capabilities: string[] }>): Map<string, readonly string[]> {
  return new Map(list.map((o) => [o.role_id, o.capabilities]));
}

function apply(snap: Snapshot, roleNames: readonly string[], idpCapabilities: readonly string[]): readonly string[] {
  const roles = snap.roles;
  if (roles === null) return idpCapabilities;
  const memoKey = roleNames.join('\u0000');
  const hit = snap.memo.get(memoKey);
  if (hit !== undefined) return hit;
  const held = roleNames.map((n) => roles.get(n)).filter((r): r is RoleRecord => r !== undefined);
  // A locked role holds every catalog key: the IdP's answer already says so.
  const overridden = !held.some((r) => r.locked) && held.some((r) => snap.app.has(r.role_id) || snap.tenantWide.has(r.role_id));
  let out: readonly string[] = idpCapabilities;
  if (overridden) {
    const keys = new Set<string>();
    for (const r of held) for (const c of snap.app.get(r.role_id) ?? snap.tenantWide.get(r.role_id) ?? r.capabilities) keys.add(c);
    out = [...keys].sort();
  }
  if (snap.memo.size >= MAX_MEMO) snap.memo.clear();
  snap.memo.set(memoKey, out);
  return out;
}

const bound = new WeakMap<ContextAnswer, EffectiveCapabilities>();

/** Ties an IdP answer to the resolver of the identity service that fetched it. */
export function bindResolver(answer: ContextAnswer, resolver: EffectiveCapabilities): ContextAnswer {
  bound.set(answer, resolver);
  return answer;
}

/** What checkContext calls: the effective list, synchronously when the snapshot is cached. */
export function effectiveCapabilities(
  answer: ContextAnswer,
  tenantId: string,
  applicationId: string | null,
  roleNames: readonly string[],
  idpCapabilities: readonly string[],
): readonly string[] | Promise<readonly string[]> {
  const resolver = bound.get(answer);
  return resolver === undefined ? idpCapabilities : resolver.resolve(tenantId, applicationId, roleNames, idpCapabilities);
}

