/**
 * The OAuth side of the development IdP: the token endpoint (client_credentials and RFC 8693
 * token exchange), the development sign-in that stands in for a real login, and revocation
 * (RFC 7009). Tokens are JWTs signed by the key ring; docs/identity-provider.md lists every claim.
 */
import { randomUUID } from 'node:crypto';
import { jwtVerify, type JWTPayload } from 'jose';
import { TOKEN_AUDIENCE } from '../config/index.ts';
import { USER_SCOPE } from '../identity/catalog.ts';
import type { ClientRegistry, ClientRequest, OAuthParams, RegisteredClient } from './dev-idp-clients.ts';
import type { FixtureDirectory } from './dev-idp-directory.ts';
import { SIGNING_ALG, type KeyRing } from './dev-idp-keys.ts';
import type { RevocationLog } from './dev-idp-revocations.ts';
import { GRANT_AUTHORIZATION_CODE, type AuthorizationCodes } from './dev-idp-authorize.ts';
import { OAuthError } from './oauth-error.ts';

export const GRANT_CLIENT_CREDENTIALS = 'client_credentials';
export const GRANT_TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const TOKEN_TYPE_ID_TOKEN = 'urn:ietf:params:oauth:token-type:id_token';
export const TOKEN_TYPE_JWT = 'urn:ietf:params:oauth:token-type:jwt';
export const TOKEN_TYPE_ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';

/** The contract caps user tokens at 10 minutes; there is no refresh token. */
export const USER_TOKEN_MAX_SECONDS = 600;
export const ID_TOKEN_SECONDS = 3600;

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
  /** Token exchange only (RFC 8693 §2.2.1). */
  issued_token_type?: typeof TOKEN_TYPE_ACCESS_TOKEN;
}

export interface DevLoginResponse {
  id_token: string;
  token_type: 'Bearer';
  expires_in: number;
}

/**
 * The authorization_code grant's answer: the user's ID token. The development IdP issues no
 * access token of its own (chat tokens come from the exchange); a real IdP's is not needed.
 */
export interface IdTokenResponse extends DevLoginResponse {
  scope: string;
}

export interface OAuthDeps {
  issuer: () => string;
  now: () => number;
  resourceIdentifier: string;
  clients: ClientRegistry;
  directory: FixtureDirectory;
  keys: KeyRing;
  revocations: RevocationLog;
  codes: AuthorizationCodes;
}

export class OAuthService {
  constructor(private readonly d: OAuthDeps) {}

  /** The token endpoint: every grant this IdP supports. */
  async tokenEndpoint(req: ClientRequest): Promise<TokenResponse | IdTokenResponse> {
    if (req.params.get('grant_type') !== GRANT_AUTHORIZATION_CODE) return this.token(req);
    return this.authorizationCode(this.d.clients.authenticate(req), req.params);
  }

  /** The grants that issue chat access tokens (client_credentials, token exchange). */
  async token(req: ClientRequest): Promise<TokenResponse> {
    const grant = req.params.get('grant_type');
    if (grant === undefined) throw new OAuthError('invalid_request', 'grant_type is required');
    if (grant !== GRANT_CLIENT_CREDENTIALS && grant !== GRANT_TOKEN_EXCHANGE) {
      throw new OAuthError('unsupported_grant_type', `grant_type must be ${GRANT_CLIENT_CREDENTIALS}, ${GRANT_TOKEN_EXCHANGE} or ${GRANT_AUTHORIZATION_CODE}`);
    }
    const client = this.d.clients.authenticate(req);
    return grant === GRANT_CLIENT_CREDENTIALS ? this.clientCredentials(client, req.params) : this.exchange(client, req.params);
  }

  /** RFC 6749 §4.1.3 with PKCE: the code from the authorization endpoint for the user's ID token. */
  private async authorizationCode(client: RegisteredClient, params: OAuthParams): Promise<IdTokenResponse> {
    if (client.kind !== 'service' || client.redirect_uris.length === 0) {
      throw new OAuthError('unauthorized_client', `client ${client.client_id} may not use the authorization_code grant`);
    }
    const { user_id, nonce } = this.d.codes.redeem(client, params);
    const user = this.d.directory.user(user_id);
    if (!user) throw new OAuthError('invalid_grant', 'the authorization code names an unknown user');
    return Object.assign(await this.idToken(user, client.client_id, nonce), { scope: 'openid' });
  }

  private async clientCredentials(client: RegisteredClient, params: OAuthParams): Promise<TokenResponse> {
    if (client.kind !== 'machine') throw new OAuthError('unauthorized_client', `client ${client.client_id} may not use the client_credentials grant`);
    // resource= is optional for backends, but when sent it must name the chat service.
    if (params.has('resource')) this.checkResource(params);
    const allowed = client.machine.scopes;
    const requested = parseScope(params.get('scope')) ?? allowed;
    const refused = requested.filter((s) => !allowed.includes(s));
    if (refused.length > 0) throw new OAuthError('invalid_scope', `scope not allowed for this client: ${refused.join(' ')}`);
    const m = client.machine;
    const scope = requested.join(' ');
    const access_token = await this.accessToken({
      sub: client.client_id,
      client_id: client.client_id,
      scope,
      principal_type: 'machine',
      tenant_id: m.tenant_id,
      application_id: m.application_id,
      lifetime: m.token_ttl_seconds,
    });
    return { access_token, token_type: 'Bearer', expires_in: m.token_ttl_seconds, scope };
  }

  /** RFC 8693: the user's own token (an ID token issued to this very client) for a chat token. */
  private async exchange(client: RegisteredClient, params: OAuthParams): Promise<TokenResponse> {
    if (client.kind === 'machine') throw new OAuthError('unauthorized_client', `machine client ${client.client_id} may not use token exchange`);
    const subjectToken = params.get('subject_token');
    const subjectType = params.get('subject_token_type');
    if (subjectToken === undefined) throw new OAuthError('invalid_request', 'subject_token is required');
    if (subjectType === undefined) throw new OAuthError('invalid_request', 'subject_token_type is required');
    if (subjectType !== TOKEN_TYPE_ID_TOKEN && subjectType !== TOKEN_TYPE_JWT) {
      throw new OAuthError('invalid_request', `subject_token_type must be ${TOKEN_TYPE_ID_TOKEN} or ${TOKEN_TYPE_JWT}`);
    }
    const requestedType = params.get('requested_token_type');
    if (requestedType !== undefined && requestedType !== TOKEN_TYPE_ACCESS_TOKEN && requestedType !== TOKEN_TYPE_JWT) {
      throw new OAuthError('invalid_request', `requested_token_type must be ${TOKEN_TYPE_ACCESS_TOKEN}`);
    }
    if (params.has('actor_token')) throw new OAuthError('invalid_request', 'delegation (actor_token) is not supported');
    const audience = params.get('audience');
    if (audience !== undefined && audience !== TOKEN_AUDIENCE) throw new OAuthError('invalid_target', `audience must be ${TOKEN_AUDIENCE}`);
    this.checkResource(params);
    const scope = parseScope(params.get('scope'));
    if (scope !== undefined && (scope.length !== 1 || scope[0] !== USER_SCOPE)) {
      throw new OAuthError('invalid_scope', `the only scope a user token can have is ${USER_SCOPE}`);
    }

    const subject = await this.verifySubject(subjectToken, client.client_id);
    const user = this.d.directory.user(subject.sub);
    if (!user) throw new OAuthError('invalid_grant', 'the subject token names an unknown user');
    if (user.status !== 'ACTIVE') throw new OAuthError('chat_access_not_granted', 'the user account is disabled');
    if (client.kind === 'application' && !this.d.directory.chatAccess(client.tenant_id, client.application_id, user.user_id)) {
      throw new OAuthError('chat_access_not_granted', `user ${user.user_id} has no chat access in application ${client.application_id} of tenant ${client.tenant_id}`);
    }

    // Never outlive the sign-in the exchange is based on.
    const lifetime = Math.min(USER_TOKEN_MAX_SECONDS, subject.exp - this.nowSeconds());
    const access_token = await this.accessToken({
      sub: user.user_id,
      client_id: client.client_id,
      scope: USER_SCOPE,
      principal_type: 'user',
      ...(client.kind === 'application' ? { tenant_id: client.tenant_id, application_id: client.application_id } : {}),
      lifetime,
    });
    return { access_token, issued_token_type: TOKEN_TYPE_ACCESS_TOKEN, token_type: 'Bearer', expires_in: lifetime, scope: USER_SCOPE };
  }

  /** Development sign-in: the "user's own token" a real IdP would hand out after a login. */
  async devLogin(params: OAuthParams): Promise<DevLoginResponse> {
    const userId = params.get('user_id');
    const clientId = params.get('client_id');
    if (userId === undefined) throw new OAuthError('invalid_request', 'user_id is required');
    if (clientId === undefined) throw new OAuthError('invalid_request', 'client_id is required');
    const client = this.d.clients.find(clientId);
    if (!client || client.kind === 'machine') throw new OAuthError('invalid_client', `${clientId} is not a client users can sign in to`);
    const user = this.d.directory.user(userId);
    if (!user) throw new OAuthError('invalid_request', `unknown user ${userId}`);
    return this.idToken(user, client.client_id, undefined);
  }

  private async idToken(user: { user_id: string; display_name: string | null }, clientId: string, nonce: string | undefined): Promise<DevLoginResponse> {
    const iat = this.nowSeconds();
    const id_token = await this.d.keys.sign(
      { iss: this.d.issuer(), sub: user.user_id, aud: clientId, iat, exp: iat + ID_TOKEN_SECONDS, jti: randomUUID(), name: user.display_name ?? user.user_id, ...(nonce === undefined ? {} : { nonce }) },
      'JWT',
    );
    return { id_token, token_type: 'Bearer', expires_in: ID_TOKEN_SECONDS };
  }

  /**
   * RFC 7009. Unknown, foreign, expired or garbage tokens are not an error (the client cannot
   * tell whether a token is still valid, and must not learn about other clients' tokens).
   */
  async revoke(req: ClientRequest): Promise<void> {
    const client = this.d.clients.authenticate(req);
    const token = req.params.get('token');
    if (token === undefined) throw new OAuthError('invalid_request', 'token is required');
    let payload: JWTPayload;
    let typ: string | undefined;
    try {
      ({ payload, protectedHeader: { typ } } = await jwtVerify(token, (h) => this.d.keys.verificationKey(h), {
        issuer: this.d.issuer(),
        algorithms: [SIGNING_ALG],
        currentDate: new Date(this.d.now()),
      }));
    } catch {
      return;
    }
    // Access tokens name their client in client_id; ID tokens in aud.
    const owner = typ === 'at+jwt' ? payload.client_id : payload.aud;
    if (owner !== client.client_id) return;
    if (typeof payload.jti !== 'string' || typeof payload.exp !== 'number') return;
    this.d.revocations.record({ jti: payload.jti, exp: payload.exp });
  }

  private checkResource(params: OAuthParams): void {
    const resource = params.get('resource');
    if (resource !== this.d.resourceIdentifier) {
      throw new OAuthError('invalid_target', `resource must be the chat service's resource identifier ${this.d.resourceIdentifier}`);
    }
  }

  private async verifySubject(token: string, clientId: string): Promise<{ sub: string; exp: number }> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, (h) => this.d.keys.verificationKey(h), {
        issuer: this.d.issuer(),
        audience: clientId,
        algorithms: [SIGNING_ALG],
        typ: 'JWT',
        requiredClaims: ['sub', 'exp', 'jti'],
        currentDate: new Date(this.d.now()),
      }));
    } catch (err) {
      throw new OAuthError('invalid_grant', `the subject token is not valid for this client: ${(err as Error).message}`);
    }
    if (typeof payload.jti === 'string' && this.d.revocations.has(payload.jti)) {
      throw new OAuthError('invalid_grant', 'the subject token has been revoked');
    }
    return { sub: String(payload.sub), exp: Number(payload.exp) };
  }

  private async accessToken(t: {
    sub: string;
    client_id: string;
    scope: string;
    principal_type: 'user' | 'machine';
    tenant_id?: string;
    application_id?: string;
    lifetime: number;
  }): Promise<string> {
    const { lifetime, ...claims } = t;
    const iat = this.nowSeconds();
    return this.d.keys.sign({ iss: this.d.issuer(), aud: TOKEN_AUDIENCE, iat, exp: iat + lifetime, jti: randomUUID(), ...claims }, 'at+jwt');
  }

  private nowSeconds(): number {
    return Math.floor(this.d.now() / 1000);
  }
}

/** Space-delimited scope (RFC 6749 §3.3); undefined when absent or blank. */
function parseScope(raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  const scopes = [...new Set(raw.split(' ').filter((s) => s !== ''))];
  return scopes.length === 0 ? undefined : scopes;
}
