/**
 * The node's view of identity: token verification, revocations, and cached directory answers.
 * Everything the edge asks the IdP goes through here, so caching, coalescing and the
 * `identity_unavailable` rule live in one place.
 */
import { ApiError, storeUnavailable } from '../errors/catalog.ts';
import { StoreUnavailableError } from '../store/errors.ts';
import type { Logger } from '../log/index.ts';
import type { Metrics } from '../metrics/index.ts';
import { bindResolver, EffectiveCapabilities } from './effective-capabilities.ts';
import { FreshCache, type FreshCacheStats } from './fresh-cache.ts';
import { RevocationList } from './revocations.ts';
import { TokenVerifier } from './token-verifier.ts';
import {
  IdentityUnavailableError,
  type ApplicationRecord,
  type CapabilityDef,
  type ContextAnswer,
  type ContextQuery,
  type IdentityDirectory,
  type RoleRecord,
  type TenantRecord,
  type UserProfile,
} from './types.ts';

export interface IdentityServiceOptions {
  cacheTtlMs: number;
  revocationPollMs: number;
  tokenCacheSize: number;
}

const MAX_CONTEXTS = 100_000;
const MAX_SMALL = 10_000;

export class IdentityService {
  readonly revocations: RevocationList;
  readonly verifier: TokenVerifier;
  private readonly contexts: FreshCache<ContextAnswer>;
  private readonly apps: FreshCache<ApplicationRecord[]>;
  private readonly tenantsOfUser: FreshCache<TenantRecord[]>;
  private readonly roleSets: FreshCache<RoleRecord[]>;
  private readonly catalogCache: FreshCache<CapabilityDef[]>;
  /** Role-permission overrides applied to users' capabilities; the store is plugged in by the node. */
  readonly effective: EffectiveCapabilities;

  constructor(
    readonly directory: IdentityDirectory,
    opts: IdentityServiceOptions,
    metrics: Metrics,
    private readonly log: Logger,
  ) {
    this.revocations = new RevocationList(directory, opts.revocationPollMs, log);
    this.verifier = new TokenVerifier(directory, this.revocations, opts.tokenCacheSize, (r) => metrics.tokenVerifications.inc(r));
    const stats = (kind: string): FreshCacheStats => ({
      hit: () => metrics.identityLookups.inc({ kind, result: 'hit' }),
      miss: () => metrics.identityLookups.inc({ kind, result: 'miss' }),
      error: () => metrics.identityLookups.inc({ kind, result: 'error' }),
    });
    const ttl = opts.cacheTtlMs;
    this.contexts = new FreshCache(ttl, MAX_CONTEXTS, stats('context'));
    this.apps = new FreshCache(ttl, MAX_SMALL, stats('applications'));
    this.tenantsOfUser = new FreshCache(ttl, MAX_SMALL, stats('user_tenants'));
    this.roleSets = new FreshCache(ttl, MAX_SMALL, stats('roles'));
    this.catalogCache = new FreshCache(ttl, 1, stats('catalog'));
    this.effective = new EffectiveCapabilities((t, a) => this.roles(t, a), ttl);
  }

  /** Loads keys and revocations. An unreachable IdP is logged, not fatal: calls answer 503 until it is back. */
  async start(): Promise<void> {
    try {
      await this.verifier.refreshKeys(true);
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'identity provider keys not loaded at start; will retry on first token');
    }
    await this.revocations.start();
  }

  static contextKey(q: ContextQuery): string {
    return `${q.tenant_id}\u0000${q.application_id ?? ''}\u0000${q.user_id ?? ''}`;
  }

  /** The fresh cached answer, synchronously, or undefined. */
  peekContext(q: ContextQuery): ContextAnswer | undefined {
    return this.contexts.peek(IdentityService.contextKey(q));
  }

  /** The last answer seen, however old: never for authorization (see FreshCache.lastKnown). */
  lastKnownContext(q: ContextQuery): ContextAnswer | undefined {
    return this.contexts.lastKnown(IdentityService.contextKey(q));
  }

  lastKnownApplications(tenantId: string): ApplicationRecord[] | undefined {
    return this.apps.lastKnown(tenantId);
  }

  context(q: ContextQuery): Promise<ContextAnswer> {
    return guard(this.contexts.get(IdentityService.contextKey(q), () => this.directory.context(q).then((a) => this.seen(normalize(a)))));
  }

  /** Called with each member profile fetched from the IdP (once per freshness period per context). */
  onProfile: ((tenantId: string, profile: UserProfile) => void) | null = null;

  private seen(a: ContextAnswer): ContextAnswer {
    if (a.member && a.tenant && this.onProfile) this.onProfile(a.tenant.tenant_id, a.member.profile);
    return bindResolver(a, this.effective);
  }

  applications(tenantId: string): Promise<ApplicationRecord[]> {
    return guard(this.apps.get(tenantId, () => this.directory.applications(tenantId)));
  }

  peekApplications(tenantId: string): ApplicationRecord[] | undefined {
    return this.apps.peek(tenantId);
  }

  userTenants(userId: string): Promise<TenantRecord[]> {
    return guard(this.tenantsOfUser.get(userId, () => this.directory.userTenants(userId)));
  }

  roles(tenantId: string, applicationId: string | null): Promise<RoleRecord[]> {
    return guard(this.roleSets.get(`${tenantId}\u0000${applicationId ?? ''}`, () => this.directory.roles(tenantId, applicationId)));
  }

  capabilityCatalog(): Promise<CapabilityDef[]> {
    return guard(this.catalogCache.get('catalog', () => this.directory.capabilityCatalog()));
  }

  profiles(tenantId: string, userIds: string[]): Promise<UserProfile[]> {
    return guard(this.directory.profiles(tenantId, userIds));
  }

  async close(): Promise<void> {
    this.revocations.stop();
    await this.directory.close();
  }
}

/**
 * Sorted role and capability lists, once per fetched answer: every request served from the cache
 * can then hand them out as they are (they are shared: read only).
 */
function normalize(a: ContextAnswer): ContextAnswer {
  const m = a.member;
  if (m === null) return a;
  // Overridden fields are taken out before the spread: no object literal here starts with a spread
  // (test/object-spread.test.ts says why).
  const { member: _m, ...answer } = a;
  const { tenant_roles, tenant_capabilities, application, ...member } = m;
  let app: typeof application = application;
  if (application) {
    const { roles, capabilities, ...rest } = application;
    app = { roles: [...roles].sort(), capabilities: [...capabilities].sort(), ...rest };
  }
  return {
    member: { tenant_roles: [...tenant_roles].sort(), tenant_capabilities: [...tenant_capabilities].sort(), application: app, ...member },
    ...answer,
  };
}

/** The one place where an unreachable IdP becomes the contract's `identity_unavailable`. */
export function guard<T>(p: Promise<T>): Promise<T> {
  return p.catch((err: unknown) => {
    throw toApiError(err);
  });
}

/**
 * What the edge answers for a failure without a code of its own: an unreachable IdP is
 * `identity_unavailable`, an unreachable store (a route's own store read: history, listings, the
 * idempotency records) `service_unavailable`, both 503 with Retry-After; the rest stays as is.
 */
export function toApiError(err: unknown): unknown {
  if (err instanceof IdentityUnavailableError) {
    return new ApiError('identity_unavailable', 'the identity provider cannot be reached; try again shortly', { 'Retry-After': '1' });
  }
  if (err instanceof StoreUnavailableError) return storeUnavailable();
  return err;
}
