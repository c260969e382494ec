/**
 * Sign-in of the service's own web app, done by the node on the app's behalf (routes under
 * `/auth`, callable from the node's own origin only):
 *
 *   app ──(browser to the IdP's authorization endpoint, PKCE S256)──► code
 *   app ──POST /auth/sign-in {code, code_verifier, redirect_uri}──► node
 *        node ──authorization_code grant──► IdP: the user's ID token (client CHAT_WEB_CLIENT_ID)
 *        node ──token exchange (RFC 8693)──► IdP: a chat token (≤ 10 min)
 *   app ◄── {access_token, expires_in, id_token, id_token_expires_at, user_id}
 *   app ──POST /auth/renew {id_token}──► a fresh chat token, before the old one expires
 *   app ──POST /auth/sign-out {tokens}──► both revoked at the IdP
 *
 * So the app needs no CORS at the IdP and every failure reaches it as the contract's error body:
 * a redirect URI that is not the app's own: `invalid_redirect_uri` (400, checked before the IdP
 * is asked); a code the IdP refuses: `invalid_grant` (400); an ID token it refuses on renewal:
 * `invalid_id_token` (401); a user the IdP will not let chat: `chat_access_not_granted` (403);
 * the IdP out of reach: `identity_unavailable` (503).
 *
 * Transports: the embedded IdP is called in-process through its HTTP handler; a real IdP over
 * HTTP at the endpoints its discovery document names (`authorization_endpoint`, `token_endpoint`,
 * `revocation_endpoint`).
 */
import { decodeJwt } from 'jose';
import { ApiError } from '../errors/catalog.ts';
import { IdentityUnavailableError } from './types.ts';

export interface OAuthEndpoints {
  authorization_endpoint: string;
  token_endpoint: string;
  revocation_endpoint: string | null;
  /** The `resource=` naming the chat service (RFC 8707); discovery's `chat_resource_identifier`. */
  resource: string;
}

/** How the node reaches the IdP's OAuth endpoints. Throws `IdentityUnavailableError` when it cannot. */
export interface OAuthTransport {
  endpoints(): Promise<OAuthEndpoints>;
  /** A form POST; the answer's status and parsed JSON body (undefined when not JSON). */
  post(url: string, form: Record<string, string>): Promise<{ status: number; body: unknown }>;
}

export interface WebSignInOptions {
  /** The IdP client of the web app (a public client with the app's redirect URIs). */
  clientId: string;
  /** The app's own address (`{public origin}/app/`): the only redirect URI the node accepts. */
  appUrl: string;
}

export interface SignInConfig {
  authorization_endpoint: string;
  client_id: string;
  scope: string;
}

export interface WebSession {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  id_token: string;
  id_token_expires_at: string;
  user_id: string;
}

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ID_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:id_token';
const USER_SCOPE = 'chat:access';
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

export class WebSignIn {
  constructor(
    private readonly transport: OAuthTransport,
    private readonly options: WebSignInOptions,
  ) {}

  async config(): Promise<SignInConfig> {
    const e = await this.transport.endpoints();
    return { authorization_endpoint: e.authorization_endpoint, client_id: this.options.clientId, scope: 'openid' };
  }

  /** The code from the authorization endpoint for a session. */
  async signIn(code: string, codeVerifier: string, redirectUri: string): Promise<WebSession> {
    if (!isAppRedirect(redirectUri, this.options.appUrl)) {
      throw new ApiError('invalid_redirect_uri', `redirect_uri must be the web app's address ${this.options.appUrl}`);
    }
    const e = await this.transport.endpoints();
    const res = await this.transport.post(e.token_endpoint, {
      grant_type: 'authorization_code',
      client_id: this.options.clientId,
      code,
      code_verifier: codeVerifier,
      redirect_uri: redirectUri,
    });
    if (res.status !== 200) {
      const error = oauthError(res.body);
      if (error === 'invalid_grant' || error === 'invalid_request') throw new ApiError('invalid_grant', `the identity provider refused the authorization code: ${describe(res.body)}`);
      throw misconfigured('authorization_code grant', res);
    }
    const idToken = (res.body as { id_token?: unknown }).id_token;
    if (typeof idToken !== 'string') throw new IdentityUnavailableError('the identity provider answered the authorization code without an id_token');
    return this.exchange(idToken, e);
  }

  /** A fresh chat token for the ID token the app holds; `invalid_id_token` once it is no longer good. */
  async renew(idToken: string): Promise<WebSession> {
    if (safeClaims(idToken) === null) throw new ApiError('invalid_id_token', 'the ID token is not a JWT with sub and exp');
    return this.exchange(idToken, await this.transport.endpoints());
  }

  /** Revokes each token at the IdP (RFC 7009: unknown or foreign tokens are not an error). */
  async signOut(tokens: readonly string[]): Promise<void> {
    const e = await this.transport.endpoints();
    if (e.revocation_endpoint === null) return;
    const url = e.revocation_endpoint;
    await Promise.all(tokens.map((token) => this.transport.post(url, { client_id: this.options.clientId, token })));
  }

  private async exchange(idToken: string, e: OAuthEndpoints): Promise<WebSession> {
    const claims = safeClaims(idToken);
    if (claims === null) throw new ApiError('invalid_id_token', 'the ID token is not a JWT with sub and exp');
    const res = await this.transport.post(e.token_endpoint, {
      grant_type: TOKEN_EXCHANGE,
      client_id: this.options.clientId,
      subject_token: idToken,
      subject_token_type: ID_TOKEN_TYPE,
      resource: e.resource,
      scope: USER_SCOPE,
    });
    if (res.status !== 200) {
      const error = oauthError(res.body);
      if (error === 'chat_access_not_granted') throw new ApiError('chat_access_not_granted', `the identity provider does not let this user chat: ${describe(res.body)}`);
      if (error === 'invalid_grant') throw new ApiError('invalid_id_token', `the identity provider refused the ID token: ${describe(res.body)}`);
      throw misconfigured('token exchange', res);
    }
    const body = res.body as { access_token?: unknown; expires_in?: unknown };
    if (typeof body.access_token !== 'string' || typeof body.expires_in !== 'number') {
      throw new IdentityUnavailableError('the identity provider answered the token exchange without access_token and expires_in');
    }
    return {
      access_token: body.access_token,
      token_type: 'Bearer',
      expires_in: body.expires_in,
      id_token: idToken,
      id_token_expires_at: new Date(claims.exp * 1000).toISOString(),
      user_id: claims.sub,
    };
  }
}

/**
 * The app's own address, or (when that is a loopback address) the same path on any loopback
 * name and port: `npm start` serves http://127.0.0.1:8080/app/, and a person may type localhost.
 */
export function isAppRedirect(uri: string, appUrl: string): boolean {
  if (uri === appUrl) return true;
  const u = parse(uri);
  const a = parse(appUrl);
  if (u === null || a === null) return false;
  return (
    LOOPBACK.has(a.hostname) && LOOPBACK.has(u.hostname) && u.protocol === a.protocol && u.pathname === a.pathname &&
    u.search === '' && u.hash === '' && u.username === '' && u.password === ''
  );
}

function parse(s: string): URL | null {
  try {
    return new URL(s);
  } catch {
    return null;
  }
}

function safeClaims(jwt: string): { sub: string; exp: number } | null {
  try {
    const c = decodeJwt(jwt);
    return typeof c.sub === 'string' && typeof c.exp === 'number' ? { sub: c.sub, exp: c.exp } : null;
  } catch {
    return null;
  }
}

function oauthError(body: unknown): string | undefined {
  const e = (body as { error?: unknown } | undefined)?.error;
  return typeof e === 'string' ? e : undefined;
}

function describe(body: unknown): string {
  const d = (body as { error_description?: unknown } | undefined)?.error_description;
  return typeof d === 'string' ? d : (oauthError(body) ?? 'no reason given');
}

/** The IdP refused the node itself (client not registered, grant not allowed): the operator must fix it. */
function misconfigured(what: string, res: { status: number; body: unknown }): Error {
  if (res.status >= 500 || oauthError(res.body) === undefined) return new IdentityUnavailableError(`the identity provider answered ${res.status} to the ${what}`);
  return new Error(`the identity provider refused the web app's ${what} (${res.status} ${describe(res.body)}): check CHAT_WEB_CLIENT_ID and its registration`);
}
