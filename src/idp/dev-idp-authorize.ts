/**
 * The authorization endpoint of the development IdP: the authorization code grant (RFC 6749
 * §4.1) with PKCE (RFC 7636, S256 only), for the chat service's own web app.
 *
 *   browser ──GET /oauth/authorize?response_type=code&client_id&redirect_uri&state&code_challenge…──► login page
 *           ──POST /oauth/authorize (the same fields + user_id)──► 303 redirect_uri?code&state
 *   node    ──POST /oauth/token grant_type=authorization_code&code&redirect_uri&code_verifier──► {id_token}
 *
 * The login page lists the fixture's users: choosing one is the whole "login" (development
 * only, like POST /dev/login). Errors about the client or the redirect URI are shown on a page and
 * never redirected (RFC 6749 §4.1.2.1: the URI cannot be trusted); every other error goes back to
 * the redirect URI as `error=` with the state. Codes live 60 s, are bound to the client, the
 * redirect URI and the code challenge, and are single-use: the first redemption consumes the code,
 * whether or not it succeeds.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { ClientRegistry, OAuthParams, RegisteredClient } from './dev-idp-clients.ts';
import { OAuthError } from './oauth-error.ts';

export const GRANT_AUTHORIZATION_CODE = 'authorization_code';
export const AUTH_CODE_TTL_MS = 60_000;
/** Bounds memory if codes are requested and never redeemed. */
const MAX_PENDING_CODES = 10_000;
const PKCE_VALUE = /^[A-Za-z0-9._~-]{43,128}$/;

/** A checked authorization request. */
export interface AuthorizeRequest {
  client_id: string;
  redirect_uri: string;
  state: string | undefined;
  code_challenge: string;
  scope: string;
  nonce: string | undefined;
}

/** What the endpoint does with a request: show the login page, or redirect with an error. */
export type AuthorizeOutcome = { kind: 'login'; request: AuthorizeRequest } | { kind: 'redirect'; location: string };

interface PendingCode {
  client_id: string;
  redirect_uri: string;
  code_challenge: string;
  user_id: string;
  nonce: string | undefined;
  expires: number;
}

export class AuthorizationCodes {
  private readonly pending = new Map<string, PendingCode>();

  constructor(
    private readonly clients: ClientRegistry,
    private readonly now: () => number,
  ) {}

  /**
   * Checks an authorization request. Throws `invalid_client` or `invalid_redirect_uri` (for a
   * page: the redirect URI is not trusted); other problems become an error redirect.
   */
  check(params: OAuthParams): AuthorizeOutcome {
    const clientId = params.get('client_id');
    if (clientId === undefined) throw new OAuthError('invalid_request', 'client_id is required');
    const client = this.clients.find(clientId);
    if (client === undefined || client.kind === 'machine') throw new OAuthError('invalid_request', `${clientId} is not a client users can sign in to`);
    const redirectUri = params.get('redirect_uri');
    if (redirectUri === undefined || !redirectAllowed(registeredRedirects(client), redirectUri)) {
      throw new OAuthError('invalid_redirect_uri', `redirect_uri is not registered for client ${clientId}: ${redirectUri ?? '(none)'}`);
    }
    const state = params.get('state');
    const fail = (error: string, description: string): AuthorizeOutcome => ({ kind: 'redirect', location: withQuery(redirectUri, { error, error_description: description, state }) });
    if (params.get('response_type') !== 'code') return fail('unsupported_response_type', 'response_type must be code');
    const challenge = params.get('code_challenge');
    if (challenge === undefined || !PKCE_VALUE.test(challenge)) return fail('invalid_request', 'PKCE is required: code_challenge (43-128 characters of [A-Za-z0-9._~-])');
    if (params.get('code_challenge_method') !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256');
    return {
      kind: 'login',
      request: { client_id: clientId, redirect_uri: redirectUri, state, code_challenge: challenge, scope: params.get('scope') ?? 'openid', nonce: params.get('nonce') },
    };
  }

  /** The user chose who to be: a code for the redirect URI. */
  approve(request: AuthorizeRequest, userId: string): string {
    const now = this.now();
    if (this.pending.size >= MAX_PENDING_CODES) this.prune(now);
    if (this.pending.size >= MAX_PENDING_CODES) throw new OAuthError('server_error', 'too many pending authorization codes');
    const code = randomBytes(32).toString('base64url');
    this.pending.set(code, {
      client_id: request.client_id,
      redirect_uri: request.redirect_uri,
      code_challenge: request.code_challenge,
      user_id: userId,
      nonce: request.nonce,
      expires: now + AUTH_CODE_TTL_MS,
    });
    return withQuery(request.redirect_uri, { code, state: request.state });
  }

  /** Redeems a code at the token endpoint; `invalid_grant` for anything but an exact match. */
  redeem(client: RegisteredClient, params: OAuthParams): { user_id: string; nonce: string | undefined } {
    const code = params.get('code');
    const redirectUri = params.get('redirect_uri');
    const verifier = params.get('code_verifier');
    if (code === undefined) throw new OAuthError('invalid_request', 'code is required');
    if (redirectUri === undefined) throw new OAuthError('invalid_request', 'redirect_uri is required');
    if (verifier === undefined) throw new OAuthError('invalid_request', 'code_verifier is required (PKCE)');
    const grant = this.pending.get(code);
    this.pending.delete(code); // single-use, also when this attempt fails
    if (grant === undefined || grant.expires <= this.now()) throw new OAuthError('invalid_grant', 'the authorization code is unknown, used or expired');
    if (grant.client_id !== client.client_id) throw new OAuthError('invalid_grant', 'the authorization code was issued to another client');
    if (grant.redirect_uri !== redirectUri) throw new OAuthError('invalid_grant', 'redirect_uri differs from the one of the authorization request');
    if (!PKCE_VALUE.test(verifier) || s256(verifier) !== grant.code_challenge) throw new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge');
    return { user_id: grant.user_id, nonce: grant.nonce };
  }

  private prune(now: number): void {
    for (const [code, g] of this.pending) if (g.expires <= now) this.pending.delete(code);
  }
}

export function registeredRedirects(client: RegisteredClient): readonly string[] {
  return client.kind === 'service' ? client.redirect_uris : [];
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Exact string match, except that a registered loopback URI matches the same URI on any port
 * (RFC 8252 §7.3: a local app picks its port when it starts).
 */
export function redirectAllowed(registered: readonly string[], uri: string): boolean {
  if (registered.includes(uri)) return true;
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return false;
  }
  if (u.protocol !== 'http:' || !LOOPBACK_HOSTS.has(u.hostname) || u.hash !== '' || u.username !== '' || u.password !== '') return false;
  const portless = `${u.protocol}//${u.hostname}${u.pathname}${u.search}`;
  return registered.includes(portless);
}

function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

function withQuery(uri: string, params: Record<string, string | undefined>): string {
  const u = new URL(uri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.set(k, v);
  return u.toString();
}
