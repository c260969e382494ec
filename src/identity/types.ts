/**
 * The identity port: what the chat node needs to know from the identity provider (IdP).
 *
 * Two drivers implement `IdentityDirectory`:
 *  - `embedded-identity-directory.ts` calls the development IdP living in the same process;
 *  - `http-identity-directory.ts` calls an IdP over HTTP (the directory contract of
 *    docs/identity-provider.md, served by `npm run idp` or by a team's own IdP adapter).
 *
 * Contract every driver keeps:
 *  - Answers are facts as of the call; the node caches them (context-cache.ts), drivers do not.
 *  - "Not found" is an answer (null / empty), never an exception.
 *  - When the IdP cannot be reached or answers garbage, the driver throws
 *    `IdentityUnavailableError`; the edge turns that into `identity_unavailable` (503) unless a
 *    fresh cached answer exists.
 */

export type TenantStatus = 'ACTIVE' | 'SUSPENDED';
export type MemberStatus = 'ACTIVE' | 'SUSPENDED' | 'REMOVED';
export type AccessMode = 'ALL_TENANT_MEMBERS' | 'ASSIGNED_USERS';

export interface TenantRecord {
  tenant_id: string;
  name: string;
  slug: string;
  logo_url: string | null;
  status: TenantStatus;
  /** Chat switched on for the tenant as a whole. */
  chat_enabled: boolean;
}

export interface ApplicationRecord {
  application_id: string;
  tenant_id: string;
  name: string;
  slug: string;
  logo_url: string | null;
  type: string;
  access_mode: AccessMode;
  identity_status: 'ACTIVE' | 'DISABLED';
  chat_enabled: boolean;
  synced_at: string;
  /** The application's own OAuth client (used by its frontend and backend). */
  client_id: string;
  /** Browser origins registered on that client; exact `scheme://host[:port]` strings. */
  allowed_origins: string[];
}

export interface UserProfile {
  user_id: string;
  display_name: string | null;
  avatar_url: string | null;
}

export interface CapabilityDef {
  key: string;
  description: string;
  /** `tenant` capabilities (administration.*) are held tenant-wide; `application` ones per app. */
  scope: 'tenant' | 'application';
}

export interface RoleRecord {
  role_id: string;
  role: string;
  display_name: string | null;
  role_scope: 'tenant' | 'application';
  /** For application roles: the application it belongs to; null for tenant roles. */
  application_id: string | null;
  system: boolean;
  /** True for `tenant_owner`: holds every capability, not editable. */
  locked: boolean;
  capabilities: string[];
}

/** The member part of a context answer: who the user is in the tenant and the application. */
export interface MembershipAnswer {
  profile: UserProfile;
  status: MemberStatus;
  /** Names of the user's tenant-scoped roles. */
  tenant_roles: string[];
  /** Capabilities granted by the tenant-scoped roles (tenant_owner: every catalog key). */
  tenant_capabilities: string[];
  /** Present when an application was asked about and exists. */
  application: {
    has_access: boolean;
    /** Names of the user's application-scoped roles (plus tenant roles that apply there). */
    roles: string[];
    /** Effective capabilities in the application. */
    capabilities: string[];
  } | null;
}

/** One round trip answers everything the edge checks on a call. */
export interface ContextAnswer {
  tenant: TenantRecord | null;
  /** null when no application was asked about or it does not exist in the tenant. */
  application: ApplicationRecord | null;
  /** null when no user was asked about or the user is not a tenant member at all. */
  member: MembershipAnswer | null;
}

export interface ContextQuery {
  tenant_id: string;
  application_id?: string;
  user_id?: string;
}

export interface RevocationEntry {
  jti: string;
  /** Epoch seconds: the token's own expiry; the entry can be forgotten after it. */
  exp: number;
}

export interface RevocationPage {
  items: RevocationEntry[];
  /** Opaque position; pass back as `after` to get only newer revocations. */
  cursor: string;
}

export interface IdentityDirectory {
  readonly driver: 'embedded' | 'http';
  /** The issuer the node accepts tokens from (`iss`). */
  issuer(): string;
  /** The JWKS document (public keys) of the issuer. */
  jwks(): Promise<{ keys: Record<string, unknown>[] }>;
  context(q: ContextQuery): Promise<ContextAnswer>;
  /** Tenants the user is an ACTIVE member of (any chat_enabled value; the node filters). */
  userTenants(userId: string): Promise<TenantRecord[]>;
  applications(tenantId: string): Promise<ApplicationRecord[]>;
  roles(tenantId: string, applicationId: string | null): Promise<RoleRecord[]>;
  capabilityCatalog(): Promise<CapabilityDef[]>;
  /** Profiles for the given ids that are tenant members; unknown ids are left out. */
  profiles(tenantId: string, userIds: string[]): Promise<UserProfile[]>;
  /** Revocations recorded after `after` (null: all still unexpired). */
  revocations(after: string | null): Promise<RevocationPage>;
  /** Optional push channel: the embedded driver calls back at once on revocation. */
  onRevocation?(listener: (entry: RevocationEntry) => void): void;
  close(): Promise<void>;
}

export class IdentityUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'IdentityUnavailableError';
  }
}

/** Who is calling, from a verified token. */
export type Principal = UserPrincipal | MachinePrincipal;

interface PrincipalBase {
  /** The OAuth client the token was issued to. */
  client_id: string;
  scopes: ReadonlySet<string>;
  /** Context binding: tokens of machine clients and application clients carry one. */
  bound_tenant_id: string | null;
  bound_application_id: string | null;
  /** Token id and expiry (epoch seconds), for revocation and caching. */
  jti: string | null;
  exp: number;
}

export interface UserPrincipal extends PrincipalBase {
  type: 'user';
  user_id: string;
}

export interface MachinePrincipal extends PrincipalBase {
  type: 'machine';
}
