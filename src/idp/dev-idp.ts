/**
 * The development identity provider: a small OAuth authorization server plus the chat directory,
 * both driven by a fixture file. The chat node embeds it (mounted at `/idp`, driver `embedded`)
 * or talks to it over HTTP as a separate process (`npm run idp`, driver `http`) exactly as it would
 * talk to a team's real IdP adapter. Signing keys are the fixture's `signing_keys`, or kept in the
 * data directory (key-file.ts); other state (revocations) lives in memory and is lost on restart.
 *
 *   DevIdp ── KeyRing (ES256 keys, JWKS, rotation)
 *         ├─ OAuthService (token endpoint, dev login, revocation) ── ClientRegistry
 *         ├─ FixtureDirectory (context, tenants, applications, roles, catalog, profiles)
 *         └─ RevocationLog (cursor-paged log + synchronous listeners)
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { JWK } from 'jose';
import type {
  ApplicationRecord,
  CapabilityDef,
  ContextAnswer,
  ContextQuery,
  RevocationEntry,
  RevocationPage,
  RoleRecord,
  TenantRecord,
  UserProfile,
} from '../identity/types.ts';
import { ClientRegistry, type ClientRequest, type OAuthParams } from './dev-idp-clients.ts';
import { FixtureDirectory } from './dev-idp-directory.ts';
import { KeyRing, SIGNING_ALG } from './dev-idp-keys.ts';
import {
  GRANT_CLIENT_CREDENTIALS,
  GRANT_TOKEN_EXCHANGE,
  ID_TOKEN_SECONDS,
  OAuthService,
  USER_TOKEN_MAX_SECONDS,
  type DevLoginResponse,
  type IdTokenResponse,
  type TokenResponse,
} from './dev-idp-oauth.ts';
import { RevocationLog } from './dev-idp-revocations.ts';
import { AuthorizationCodes, GRANT_AUTHORIZATION_CODE, type AuthorizeOutcome } from './dev-idp-authorize.ts';
import type { Fixture } from './fixture-schema.ts';
import { OAuthError } from './oauth-error.ts';

export interface DevIdpOptions {
  /** The `iss` of every token, and the base of every endpoint URL in the discovery document. */
  issuer: string;
  /** Enables POST /dev/login and POST /dev/rotate-keys; never in production. */
  devLogin: boolean;
  /**
   * Where generated signing keys are kept across restarts (`<data dir>/idp-signing-keys.json`);
   * absent: in memory only. Unused when the fixture configures `signing_keys`.
   */
  keyFile?: string;
  /** Clock in epoch milliseconds (tests move it). */
  now?: () => number;
  /** Where errors thrown by revocation listeners go; default: stderr. */
  onListenerError?: (err: unknown) => void;
}

export interface DiscoveryDocument {
  issuer: string;
  jwks_uri: string;
  token_endpoint: string;
  revocation_endpoint: string;
  grant_types_supported: string[];
  token_endpoint_auth_methods_supported: string[];
  revocation_endpoint_auth_methods_supported: string[];
  id_token_signing_alg_values_supported: string[];
  /** Base URL of the directory endpoints (GET {base}/context, ...). */
  chat_directory_endpoint: string;
  /** The `resource=` value (RFC 8707) that names the chat service in token requests. */
  chat_resource_identifier: string;
  /** Present when development sign-in is enabled. */
  dev_login_endpoint?: string;
  /** The login page (authorization code with PKCE); present when development sign-in is enabled. */
  authorization_endpoint?: string;
  response_types_supported?: string[];
  code_challenge_methods_supported?: string[];
}

export class DevIdp {
  readonly devLogin: boolean;
  private currentIssuer: string;
  private readonly directory: FixtureDirectory;
  private readonly revocationLog: RevocationLog;
  private readonly oauth: OAuthService;
  private readonly directoryKeys: Buffer[];
  private readonly keys: KeyRing;
  private readonly codes: AuthorizationCodes;

  /** Ready at once: the first signing key is generated here. */
  constructor(
    /** The fixture as loaded; treat as read-only (the directory answers are built from it). */
    readonly fixture: Fixture,
    options: DevIdpOptions,
  ) {
    const now = options.now ?? Date.now;
    this.devLogin = options.devLogin;
    this.currentIssuer = normalizeIssuer(options.issuer);
    this.keys = new KeyRing(maxTokenLifetime(fixture), now, fixture.signing_keys, options.keyFile ?? null);
    this.directory = new FixtureDirectory(fixture);
    this.revocationLog = new RevocationLog(now, options.onListenerError ?? defaultListenerError);
    this.directoryKeys = fixture.directory_api_keys.map(digest);
    const clients = new ClientRegistry(fixture);
    this.codes = new AuthorizationCodes(clients, now);
    this.oauth = new OAuthService({
      issuer: () => this.currentIssuer,
      now,
      resourceIdentifier: fixture.resource_identifier,
      clients,
      directory: this.directory,
      keys: this.keys,
      revocations: this.revocationLog,
      codes: this.codes,
    });
  }

  issuer(): string {
    return this.currentIssuer;
  }

  /**
   * Changes the issuer; for a server that learns its own port only after listening (port 0).
   * Call before the first token is issued: tokens carry the issuer they were signed with.
   */
  setIssuer(issuer: string): void {
    this.currentIssuer = normalizeIssuer(issuer);
  }

  discovery(): DiscoveryDocument {
    const base = this.currentIssuer;
    const methods = ['client_secret_basic', 'client_secret_post', 'none'];
    return {
      issuer: base,
      jwks_uri: `${base}/jwks.json`,
      token_endpoint: `${base}/oauth/token`,
      revocation_endpoint: `${base}/oauth/revoke`,
      grant_types_supported: [GRANT_CLIENT_CREDENTIALS, GRANT_TOKEN_EXCHANGE, ...(this.devLogin ? [GRANT_AUTHORIZATION_CODE] : [])],
      token_endpoint_auth_methods_supported: methods,
      revocation_endpoint_auth_methods_supported: methods,
      id_token_signing_alg_values_supported: [SIGNING_ALG],
      chat_directory_endpoint: `${base}/directory`,
      chat_resource_identifier: this.fixture.resource_identifier,
      ...(this.devLogin
        ? {
            dev_login_endpoint: `${base}/dev/login`,
            authorization_endpoint: `${base}/oauth/authorize`,
            response_types_supported: ['code'],
            code_challenge_methods_supported: ['S256'],
          }
        : {}),
    };
  }

  jwks(): { keys: JWK[] } {
    return this.keys.jwks();
  }

  /** A new key signs from now on; returns its kid. Older keys stay published (see KeyRing). */
  rotateKeys(): string {
    return this.keys.rotate();
  }

  get currentKid(): string {
    return this.keys.currentKid;
  }

  // --- OAuth (errors are thrown as OAuthError) ---

  token(req: ClientRequest): Promise<TokenResponse> {
    return this.oauth.token(req);
  }

  /** POST /oauth/token: every grant, the authorization code's included. */
  tokenEndpoint(req: ClientRequest): Promise<TokenResponse | IdTokenResponse> {
    return this.oauth.tokenEndpoint(req);
  }

  /** The authorization endpoint's check (development sign-in only; callers check `devLogin`). */
  authorize(params: OAuthParams): AuthorizeOutcome {
    return this.codes.check(params);
  }

  /** The login page's answer: the user chose who to be. Returns where to send the browser. */
  approve(params: OAuthParams): string {
    const outcome = this.codes.check(params);
    if (outcome.kind === 'redirect') return outcome.location;
    const userId = params.get('user_id');
    if (userId === undefined || !this.directory.hasUser(userId)) throw new OAuthError('invalid_request', `unknown user ${userId ?? '(none)'}`);
    return this.codes.approve(outcome.request, userId);
  }

  /** Development sign-in. Callers check `devLogin` first (the HTTP layer answers 404). */
  login(params: OAuthParams): Promise<DevLoginResponse> {
    return this.oauth.devLogin(params);
  }

  revoke(req: ClientRequest): Promise<void> {
    return this.oauth.revoke(req);
  }

  /** Whether a bearer key may read the directory (constant time). */
  isDirectoryKey(key: string): boolean {
    const given = digest(key);
    let ok = false;
    for (const k of this.directoryKeys) ok = timingSafeEqual(given, k) || ok;
    return ok;
  }

  // --- Directory (the data behind IdentityDirectory; see dev-idp-directory.ts for the rules) ---

  context(q: ContextQuery): ContextAnswer {
    return this.directory.context(q);
  }

  userTenants(userId: string): TenantRecord[] {
    return this.directory.userTenants(userId);
  }

  applications(tenantId: string): ApplicationRecord[] {
    return this.directory.applications(tenantId);
  }

  roles(tenantId: string, applicationId: string | null): RoleRecord[] {
    return this.directory.roles(tenantId, applicationId);
  }

  capabilityCatalog(): CapabilityDef[] {
    return this.directory.capabilityCatalog();
  }

  profiles(tenantId: string, userIds: readonly string[]): UserProfile[] {
    return this.directory.profiles(tenantId, userIds);
  }

  revocations(after: string | null): RevocationPage {
    return this.revocationLog.page(after);
  }

  /** The listener runs synchronously at revocation time. Returns an unsubscribe function. */
  onRevocation(listener: (entry: RevocationEntry) => void): () => void {
    return this.revocationLog.listen(listener);
  }

  /** Existence checks the HTTP layer uses to answer 404 instead of an empty list. */
  hasTenant(tenantId: string): boolean {
    return this.directory.hasTenant(tenantId);
  }

  hasUser(userId: string): boolean {
    return this.directory.hasUser(userId);
  }

  hasApplication(tenantId: string, applicationId: string): boolean {
    return this.directory.hasApplication(tenantId, applicationId);
  }
}

/** The longest any token of this IdP lives: how long a retired key must stay in the JWKS. */
function maxTokenLifetime(fixture: Fixture): number {
  const machine = fixture.clients.map((c) => (c.kind === 'machine' ? c.token_ttl_seconds : 0));
  return Math.max(ID_TOKEN_SECONDS, USER_TOKEN_MAX_SECONDS, ...machine);
}

function normalizeIssuer(issuer: string): string {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new Error(`issuer must be an absolute http(s) URL (got "${issuer}")`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`issuer must be an http(s) URL (got "${issuer}")`);
  if (url.search !== '' || url.hash !== '') throw new Error(`issuer must not have a query or fragment (got "${issuer}")`);
  return issuer.replace(/\/+$/, '');
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest();
}

function defaultListenerError(err: unknown): void {
  process.stderr.write(`${JSON.stringify({ level: 'error', msg: 'revocation listener failed', err: String(err) })}\n`);
}
