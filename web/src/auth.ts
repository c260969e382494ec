/**
 * Sign-in for the web app (docs/web-app.md): authorization code with PKCE against the identity
 * provider, then the node's /auth routes trade the code for a chat token, renew it before it
 * expires (chat tokens live at most 10 minutes and have no refresh token) and revoke both tokens
 * on sign-out. The session lives in sessionStorage: one per tab, gone when the tab closes.
 */
import { ChatApiError } from '../../client/index.ts';
import { createSignInClient, type WebSession } from '../../client/web-sign-in.ts';

const SESSION_KEY = 'chat.session';
const PENDING_KEY = 'chat.signin';
/** Renew this long before the chat token expires. */
const RENEW_AHEAD_MS = 60_000;

export interface Session {
  accessToken: string;
  /** Epoch ms. */
  expiresAt: number;
  idToken: string;
  idTokenExpiresAt: number;
  userId: string;
}

/** The node's /auth routes (no token, this origin only). */
const auth = createSignInClient({ origin: '' });

export const redirectUri = (): string => `${location.origin}/app/`;

function b64url(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function random(n: number): string {
  return b64url(crypto.getRandomValues(new Uint8Array(n)));
}

/** Sends the browser to the identity provider's login (PKCE S256). */
export async function startSignIn(): Promise<void> {
  const config = await auth.config();
  const verifier = random(32);
  const challenge = b64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
  const state = random(16);
  sessionStorage.setItem(PENDING_KEY, JSON.stringify({ verifier, state, hash: location.hash }));
  const url = new URL(config.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: config.client_id,
    redirect_uri: redirectUri(),
    scope: config.scope,
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }).toString();
  location.assign(url.toString());
}

function toSession(s: WebSession): Session {
  return {
    accessToken: s.access_token,
    expiresAt: Date.now() + s.expires_in * 1000,
    idToken: s.id_token,
    idTokenExpiresAt: Date.parse(s.id_token_expires_at),
    userId: s.user_id,
  };
}

/**
 * Back from the identity provider: trades the code for a session (errors are the contract's:
 * invalid_grant, invalid_redirect_uri, chat_access_not_granted, ...). null when the address holds
 * no sign-in answer.
 */
export async function completeSignIn(): Promise<Session | null> {
  const params = new URLSearchParams(location.search);
  const code = params.get('code');
  const error = params.get('error');
  if (code === null && error === null) return null;
  const pending = JSON.parse(sessionStorage.getItem(PENDING_KEY) ?? 'null') as { verifier: string; state: string; hash: string } | null;
  sessionStorage.removeItem(PENDING_KEY);
  // The code leaves the address bar (and the history) at once.
  history.replaceState(null, '', `/app/${pending?.hash ?? ''}`);
  if (error !== null) throw new SignInError(error, params.get('error_description') ?? 'the identity provider refused the sign-in');
  if (pending === null || params.get('state') !== pending.state) throw new SignInError('invalid_state', 'this sign-in was not started here (state mismatch); sign in again');
  const s = toSession(await auth.signIn({ code: code as string, code_verifier: pending.verifier, redirect_uri: redirectUri() }));
  save(s);
  return s;
}

export class SignInError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export function savedSession(): Session | null {
  const s = JSON.parse(sessionStorage.getItem(SESSION_KEY) ?? 'null') as Session | null;
  return s !== null && s.idTokenExpiresAt > Date.now() ? s : null;
}

function save(s: Session): void {
  sessionStorage.setItem(SESSION_KEY, JSON.stringify(s));
}

/**
 * Keeps a session's chat token fresh: renews RENEW_AHEAD_MS before expiry, and on demand (a 401).
 * `onEnded` runs when the identity provider no longer accepts the sign-in.
 */
export class SessionKeeper {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private renewing: Promise<Session> | null = null;

  constructor(
    private session: Session,
    private readonly onEnded: (reason: string) => void,
    private readonly onRenewed: (s: Session) => void = () => {},
  ) {
    this.schedule();
  }

  get current(): Session {
    return this.session;
  }

  /** A token good for the next request (renewed first when it is about to expire). */
  async token(): Promise<string> {
    if (this.session.expiresAt - Date.now() < 5_000) await this.renew();
    return this.session.accessToken;
  }

  renew(): Promise<Session> {
    this.renewing ??= (async () => {
      try {
        const s = toSession(await auth.renew(this.session.idToken));
        this.session = s;
        save(s);
        this.onRenewed(s);
        this.schedule();
        return s;
      } catch (err) {
        if (err instanceof ChatApiError && (err.code === 'invalid_id_token' || err.code === 'chat_access_not_granted')) {
          this.end(err.code === 'invalid_id_token' ? 'Your sign-in has ended. Sign in again.' : 'You may no longer chat here.');
        } else {
          this.timer = setTimeout(() => void this.renew().catch(() => undefined), 10_000); // the IdP will be back
        }
        throw err;
      } finally {
        this.renewing = null;
      }
    })();
    return this.renewing;
  }

  async signOut(): Promise<void> {
    this.stop();
    sessionStorage.removeItem(SESSION_KEY);
    await auth.signOut([this.session.idToken, this.session.accessToken]).catch(() => undefined);
  }

  stop(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private end(reason: string): void {
    this.stop();
    sessionStorage.removeItem(SESSION_KEY);
    this.onEnded(reason);
  }

  private schedule(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    const wait = Math.max(1_000, this.session.expiresAt - Date.now() - RENEW_AHEAD_MS);
    this.timer = setTimeout(() => void this.renew().catch(() => undefined), wait);
  }
}
