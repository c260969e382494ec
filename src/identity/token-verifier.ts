/**
 * Bearer token verification (jose) with a cache of verified tokens.
 *
 * - Signature checked against the IdP's JWKS; an unknown `kid` triggers one JWKS refetch
 *   (rate-limited) so key rotation at the IdP needs no restart.
 * - Only asymmetric algorithms are accepted, so `alg: none` and HS256-signed-with-the-public-key
 *   tricks fail before any key is looked at. `typ` must be `at+jwt` (RFC 9068), so an ID token
 *   cannot stand in for an access token.
 * - `aud` must be `chat-api`, `iss` the IdP's issuer; `exp`, `sub`, `jti`, `client_id` required.
 * - A verified token is cached until its expiry (bounded map): the hot path pays one Map lookup
 *   and a revocation check instead of a signature check (~150-200 us).
 */
import { createLocalJWKSet, errors, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';
import { ApiError } from '../errors/catalog.ts';
import { TOKEN_AUDIENCE } from '../config/index.ts';
import { IdentityUnavailableError, type IdentityDirectory, type Principal } from './types.ts';
import type { RevocationList } from './revocations.ts';

const ALLOWED_ALGS = ['ES256', 'ES384', 'ES512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'EdDSA'];
/**
 * An unknown `kid` refetches the JWKS, at most once per this period: a token signed with a key
 * the IdP just rotated in waits for the next refetch (≤ 1 s) instead of being refused, and junk
 * tokens cannot make the node hammer the IdP.
 */
const JWKS_REFRESH_COOLDOWN_MS = 1000;
/** Clock skew tolerated on `iat`, and the longest a user token may live (contract: 10 minutes). */
const CLOCK_SKEW_S = 60;
const USER_TOKEN_MAX_LIFETIME_S = 600;

type KeyGetter = ReturnType<typeof createLocalJWKSet>;

export type VerifyResult = 'cached' | 'verified';

export class TokenVerifier {
  private keys: KeyGetter | null = null;
  private keysFetchedAt = 0;
  private refreshing: Promise<void> | null = null;
  /**
   * Keyed by the token's last 64 characters (inside its signature, unique per token) so the hot
   * path hashes 64 characters instead of the whole token; the entry keeps the full token and a
   * hit counts only when it is the same token, character for character.
   */
  private readonly cache = new Map<string, { token: string; principal: Principal }>();

  constructor(
    private readonly directory: IdentityDirectory,
    private readonly revocations: RevocationList,
    private readonly maxCached: number,
    private readonly onResult?: (result: 'cached' | 'verified' | 'invalid' | 'revoked') => void,
  ) {}

  /** Synchronous fast path: a cached, unexpired, unrevoked token. */
  cached(token: string): Principal | undefined {
    const key = cacheKey(token);
    const e = this.cache.get(key);
    if (e === undefined || e.token !== token) return undefined;
    const p = e.principal;
    if (p.exp * 1000 <= Date.now()) {
      this.cache.delete(key);
      return undefined;
    }
    if (this.revocations.has(p.jti)) {
      this.onResult?.('revoked');
      throw new ApiError('token_revoked', 'the access token has been revoked');
    }
    this.onResult?.('cached');
    return p;
  }

  async verify(token: string): Promise<Principal> {
    const hit = this.cached(token);
    if (hit) return hit;
    // Keys first: for the HTTP driver this also discovers the issuer (lazily, so a node started
    // while the IdP was down recovers on its own).
    if (this.keys === null) await this.refreshKeys(false);
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, (h, t) => this.key(h, t), {
        issuer: this.directory.issuer(),
        audience: TOKEN_AUDIENCE,
        algorithms: ALLOWED_ALGS,
        typ: 'at+jwt',
        requiredClaims: ['exp', 'sub', 'jti'],
      }));
    } catch (err) {
      // No keys because the IdP is unreachable is not the caller's fault.
      if (err instanceof IdentityUnavailableError) throw err;
      this.onResult?.('invalid');
      throw new ApiError('invalid_token', describe(err));
    }
    let principal: Principal;
    try {
      principal = toPrincipal(payload);
    } catch (err) {
      this.onResult?.('invalid');
      throw err;
    }
    if (this.revocations.has(principal.jti)) {
      this.onResult?.('revoked');
      throw new ApiError('token_revoked', 'the access token has been revoked');
    }
    this.onResult?.('verified');
    if (this.maxCached > 0) {
      if (this.cache.size >= this.maxCached) {
        const oldest = this.cache.keys().next();
        if (!oldest.done) this.cache.delete(oldest.value);
      }
      this.cache.set(cacheKey(token), { token, principal });
    }
    return principal;
  }

  private async key(header: Parameters<KeyGetter>[0], token: Parameters<KeyGetter>[1]) {
    if (this.keys === null) await this.refreshKeys(true);
    try {
      return await (this.keys as KeyGetter)(header, token);
    } catch (err) {
      if (err instanceof errors.JWKSNoMatchingKey) {
        const fetchedAt = this.keysFetchedAt;
        const wait = fetchedAt + JWKS_REFRESH_COOLDOWN_MS - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        // Someone may have refetched meanwhile; refetch only if the keys are still those we tried.
        if (this.keysFetchedAt === fetchedAt) await this.refreshKeys(false);
        return (this.keys as KeyGetter)(header, token);
      }
      throw err;
    }
  }

  /** Fetches the JWKS; concurrent refreshes share one fetch. */
  refreshKeys(force: boolean): Promise<void> {
    if (!force && this.refreshing) return this.refreshing;
    this.refreshing = this.directory
      .jwks()
      .then((jwks) => {
        this.keys = createLocalJWKSet(jwks as JSONWebKeySet);
        this.keysFetchedAt = Date.now();
      })
      .finally(() => {
        this.refreshing = null;
      });
    return this.refreshing;
  }
}

function cacheKey(token: string): string {
  return token.length > 64 ? token.slice(-64) : token;
}

function toPrincipal(c: JWTPayload): Principal {
  const bad = (what: string): never => {
    throw new ApiError('invalid_token', `the access token's ${what}`);
  };
  const scope = typeof c.scope === 'string' ? c.scope : '';
  const clientId = c.client_id;
  const kind = c.principal_type;
  if (typeof c.sub !== 'string' || c.sub === '') bad('sub claim is not a non-empty string');
  if (typeof c.jti !== 'string' || c.jti === '') bad('jti claim is not a non-empty string');
  if (typeof clientId !== 'string' || clientId === '') bad('client_id claim is missing');
  if (kind !== 'user' && kind !== 'machine') bad('principal_type claim is not user or machine');
  const nowS = Date.now() / 1000;
  if (typeof c.iat === 'number' && c.iat > nowS + CLOCK_SKEW_S) bad('iat claim is in the future');
  if (kind === 'user' && (c.exp as number) - (typeof c.iat === 'number' ? Math.min(c.iat, nowS) : nowS) > USER_TOKEN_MAX_LIFETIME_S + CLOCK_SKEW_S) {
    bad('lifetime exceeds the 10 minutes allowed for user tokens');
  }
  const tenant = typeof c.tenant_id === 'string' ? c.tenant_id : null;
  const app = typeof c.application_id === 'string' ? c.application_id : null;
  const base = {
    client_id: clientId as string,
    scopes: new Set(scope.split(' ').filter(Boolean)),
    bound_tenant_id: tenant,
    bound_application_id: app,
    jti: c.jti as string,
    exp: c.exp ?? 0,
  };
  if (kind === 'machine') {
    if (tenant === null || app === null) throw new ApiError('invalid_token', 'machine token is not bound to a tenant application');
    return { type: 'machine', ...base };
  }
  return { type: 'user', user_id: c.sub as string, ...base };
}

function describe(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  if (err instanceof errors.JWTExpired) return 'the access token has expired';
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'aud') return `the access token's audience is not ${TOKEN_AUDIENCE}`;
    if (err.claim === 'iss') return "the access token's issuer is not trusted";
    return `the access token's ${err.claim} claim is invalid`;
  }
  if (err instanceof errors.JOSEAlgNotAllowed) return "the access token's algorithm is not allowed";
  if (err instanceof errors.JWKSNoMatchingKey) return 'the access token is signed by an unknown key';
  if (err instanceof errors.JWSSignatureVerificationFailed) return "the access token's signature is invalid";
  if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid) return 'the access token is malformed';
  return 'the access token is invalid';
}
