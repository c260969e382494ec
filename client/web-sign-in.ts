/**
 * The sign-in routes of the service's own web app (docs/web-app.md#sign-in), at the node's origin
 * root: `GET /auth/config`, `POST /auth/sign-in`, `/auth/renew`, `/auth/sign-out`. They are no
 * operations of the API (the contract makes only the VAPID key route public), so they are not in
 * the OpenAPI document and openapi-fetch does not know them: this small client is written by hand
 * and test/client.test.ts checks its types against the node's schemas (src/api/schemas/auth.ts).
 *
 *   const auth = createSignInClient({ origin: '' });           // in the browser, same origin
 *   const config = await auth.config();
 *   const session = await auth.signIn({ code, code_verifier, redirect_uri });
 *
 * Failures throw a ChatApiError with the contract's error body (invalid_grant, invalid_id_token,
 * invalid_redirect_uri, chat_access_not_granted, identity_unavailable, ...).
 */
import { ChatApiError, type ErrorBody } from './index.ts';

/** Where to send the user to sign in. */
export interface SignInConfig {
  /** The identity provider's authorization endpoint (authorization code with PKCE, S256). */
  authorization_endpoint: string;
  /** The web app's client at the identity provider. */
  client_id: string;
  scope: string;
}

export interface SignInRequest {
  code: string;
  /** The PKCE verifier (RFC 7636): 43 to 128 characters of [A-Za-z0-9._~-]. */
  code_verifier: string;
  /** The web app's address, as sent to the authorization endpoint. */
  redirect_uri: string;
}

/** A signed-in session: a chat token (at most 10 minutes) and the ID token that renews it. */
export interface WebSession {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  id_token: string;
  id_token_expires_at: string;
  user_id: string;
}

export interface SignInClientOptions {
  /** The node's (or the balancer's) origin, such as `https://chat.example.com`; `''` in the browser. */
  origin: string;
  fetch?: typeof globalThis.fetch;
}

export interface SignInClient {
  config(): Promise<SignInConfig>;
  signIn(request: SignInRequest): Promise<WebSession>;
  renew(idToken: string): Promise<WebSession>;
  /** Revokes the tokens at the identity provider; resolves also for unknown or dead tokens. */
  signOut(tokens: string[]): Promise<void>;
}

export function createSignInClient(options: SignInClientOptions): SignInClient {
  const f = options.fetch ?? globalThis.fetch.bind(globalThis);
  const base = `${options.origin.replace(/\/$/, '')}/auth`;
  async function call<T>(path: string, body?: unknown): Promise<T> {
    const res = await f(`${base}${path}`, body === undefined ? { method: 'GET' } : { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    if (res.ok) return (res.status === 204 ? undefined : await res.json()) as T;
    const e = (await res.json().catch(() => null)) as Partial<ErrorBody> | null;
    const error: ErrorBody =
      e && typeof e.error === 'string'
        ? (e as ErrorBody)
        : { status_code: res.status, error: res.status >= 500 ? 'server_error' : 'unknown_error', message: `HTTP ${res.status}`, path: `/auth${path}`, timestamp: new Date().toISOString() };
    throw new ChatApiError(res.status, error, res.headers.get('Retry-After'));
  }
  return {
    config: () => call<SignInConfig>('/config'),
    signIn: (request) => call<WebSession>('/sign-in', request),
    renew: (idToken) => call<WebSession>('/renew', { id_token: idToken }),
    signOut: (tokens) => call<void>('/sign-out', { tokens }),
  };
}
