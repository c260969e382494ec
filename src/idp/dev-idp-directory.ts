/**
 * The directory answers of the development IdP, computed from the fixture. Every answer is a
 * freshly built object, so callers may keep or change what they get.
 *
 * Rules (docs/identity-provider.md, "Directory semantics"):
 *  - A user whose own status is DISABLED is not a member of anything.
 *  - Capabilities are held only by an ACTIVE member of an ACTIVE tenant; a suspended member or a
 *    member of a suspended tenant keeps its role names (for display) but holds nothing.
 *  - Application access: ALL_TENANT_MEMBERS grants every such member; ASSIGNED_USERS only members
 *    with an entry for the application. Application roles: the entry's roles, else the
 *    application's default_roles (ALL_TENANT_MEMBERS only).
 *  - Effective application capabilities: tenant roles plus application roles; a locked role
 *    (tenant_owner) holds every catalog key, whatever its own list says.
 */
import type {
  ApplicationRecord,
  CapabilityDef,
  ContextAnswer,
  ContextQuery,
  MembershipAnswer,
  RoleRecord,
  TenantRecord,
  UserProfile,
} from '../identity/types.ts';
import { appliesTo } from './fixture.ts';
import type { Fixture, FixtureApplication, FixtureMember, FixtureRole, FixtureTenant, FixtureUser } from './fixture-schema.ts';

export class FixtureDirectory {
  private readonly tenants: Map<string, FixtureTenant>;
  private readonly users: Map<string, FixtureUser>;
  private readonly catalogKeys: string[];

  constructor(private readonly fixture: Fixture) {
    this.tenants = new Map(fixture.tenants.map((t) => [t.tenant_id, t]));
    this.users = new Map(fixture.users.map((u) => [u.user_id, u]));
    this.catalogKeys = fixture.capabilities.map((c) => c.key);
  }

  hasTenant(tenantId: string): boolean {
    return this.tenants.has(tenantId);
  }

  hasUser(userId: string): boolean {
    return this.users.has(userId);
  }

  hasApplication(tenantId: string, applicationId: string): boolean {
    return this.tenants.get(tenantId)?.applications.some((a) => a.application_id === applicationId) ?? false;
  }

  user(userId: string): FixtureUser | undefined {
    return this.users.get(userId);
  }

  context(q: ContextQuery): ContextAnswer {
    const t = this.tenants.get(q.tenant_id);
    if (!t) return { tenant: null, application: null, member: null };
    const app = q.application_id === undefined ? undefined : t.applications.find((a) => a.application_id === q.application_id);
    return {
      tenant: tenantRecord(t),
      application: app ? applicationRecord(t, app) : null,
      member: q.user_id === undefined ? null : this.membership(t, app ?? null, q.user_id),
    };
  }

  /**
   * Whether a token exchange for this user may yield a chat token for the application: the
   * tenant and the application are up and chat-enabled, and the user has access there.
   */
  chatAccess(tenantId: string, applicationId: string, userId: string): boolean {
    const answer = this.context({ tenant_id: tenantId, application_id: applicationId, user_id: userId });
    const { tenant, application, member } = answer;
    return (
      tenant !== null &&
      tenant.status === 'ACTIVE' &&
      tenant.chat_enabled &&
      application !== null &&
      application.chat_enabled &&
      application.identity_status === 'ACTIVE' &&
      member !== null &&
      member.status === 'ACTIVE' &&
      member.application?.has_access === true
    );
  }

  userTenants(userId: string): TenantRecord[] {
    if (this.users.get(userId)?.status !== 'ACTIVE') return [];
    return this.fixture.tenants
      .filter((t) => t.members.some((m) => m.user_id === userId && m.status === 'ACTIVE'))
      .map(tenantRecord);
  }

  applications(tenantId: string): ApplicationRecord[] {
    const t = this.tenants.get(tenantId);
    return t ? t.applications.map((a) => applicationRecord(t, a)) : [];
  }

  /** applicationId null: the tenant roles; otherwise the application roles that apply there. */
  roles(tenantId: string, applicationId: string | null): RoleRecord[] {
    const t = this.tenants.get(tenantId);
    if (!t) return [];
    if (applicationId === null) return t.roles.filter((r) => r.role_scope === 'tenant').map((r) => this.roleRecord(r));
    if (!t.applications.some((a) => a.application_id === applicationId)) return [];
    return t.roles.filter((r) => appliesTo(r, applicationId)).map((r) => this.roleRecord(r));
  }

  capabilityCatalog(): CapabilityDef[] {
    return this.fixture.capabilities.map((c) => ({ ...c }));
  }

  /** Profiles of tenant members (any member status) in the order asked, each id once. */
  profiles(tenantId: string, userIds: readonly string[]): UserProfile[] {
    const t = this.tenants.get(tenantId);
    if (!t) return [];
    const members = new Set(t.members.map((m) => m.user_id));
    const out: UserProfile[] = [];
    for (const id of new Set(userIds)) {
      const u = this.users.get(id);
      if (u && u.status === 'ACTIVE' && members.has(id)) out.push(profile(u));
    }
    return out;
  }

  private membership(t: FixtureTenant, app: FixtureApplication | null, userId: string): MembershipAnswer | null {
    const user = this.users.get(userId);
    const m = t.members.find((x) => x.user_id === userId);
    if (!user || user.status !== 'ACTIVE' || !m) return null;
    const holds = m.status === 'ACTIVE' && t.status === 'ACTIVE';
    const tenantRoles = t.roles.filter((r) => r.role_scope === 'tenant' && m.tenant_roles.includes(r.role));
    return {
      profile: profile(user),
      status: m.status,
      tenant_roles: [...m.tenant_roles],
      tenant_capabilities: holds ? this.capabilitiesOf(tenantRoles) : [],
      application: app === null ? null : this.applicationPart(t, app, m, holds, tenantRoles),
    };
  }

  private applicationPart(t: FixtureTenant, app: FixtureApplication, m: FixtureMember, holds: boolean, tenantRoles: FixtureRole[]) {
    const entry = m.applications[app.application_id];
    const hasAccess = holds && (app.access_mode === 'ALL_TENANT_MEMBERS' || entry !== undefined);
    if (!hasAccess) return { has_access: false, roles: [], capabilities: [] };
    const names = entry ? entry.roles : app.default_roles;
    const appRoles = t.roles.filter((r) => appliesTo(r, app.application_id) && names.includes(r.role));
    const all = [...tenantRoles, ...appRoles];
    return { has_access: true, roles: [...new Set(all.map((r) => r.role))], capabilities: this.capabilitiesOf(all) };
  }

  /** Union of the roles' keys, in catalog order (stable output for caching and tests). */
  private capabilitiesOf(roles: readonly FixtureRole[]): string[] {
    if (roles.some((r) => r.locked)) return [...this.catalogKeys];
    const held = new Set(roles.flatMap((r) => r.capabilities));
    return this.catalogKeys.filter((k) => held.has(k));
  }

  private roleRecord(r: FixtureRole): RoleRecord {
    const { capabilities, ...rest } = r;
    return { capabilities: r.locked ? [...this.catalogKeys] : this.catalogKeys.filter((k) => capabilities.includes(k)), ...rest };
  }
}

function tenantRecord(t: FixtureTenant): TenantRecord {
  return { tenant_id: t.tenant_id, name: t.name, slug: t.slug, logo_url: t.logo_url, status: t.status, chat_enabled: t.chat_enabled };
}

function applicationRecord(t: FixtureTenant, a: FixtureApplication): ApplicationRecord {
  return {
    application_id: a.application_id,
    tenant_id: t.tenant_id,
    name: a.name,
    slug: a.slug,
    logo_url: a.logo_url,
    type: a.type,
    access_mode: a.access_mode,
    identity_status: a.identity_status,
    chat_enabled: a.chat_enabled,
    synced_at: a.synced_at,
    client_id: a.client.client_id,
    allowed_origins: [...a.client.allowed_origins],
  };
}

function profile(u: FixtureUser): UserProfile {
  return { user_id: u.user_id, display_name: u.display_name, avatar_url: u.avatar_url };
}
