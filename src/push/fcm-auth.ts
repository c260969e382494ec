/**
 * OAuth2 access tokens for FCM from a Google service-account key (RFC 7523 JWT bearer grant):
 * a JWT `{iss: client_email, scope, aud: token_uri, iat, exp: iat + 1 h}` signed RS256 with the
 * key's private key (`kid`: private_key_id) is exchanged at `token_uri` for an access token.
 *
 * The token is cached until shortly before it expires (5 minutes, or half its lifetime when that
 * is shorter), and concurrent sends share one exchange. `invalidate` drops a token FCM refused
 * (401), so the next send fetches a new one. A failed exchange rejects with RetryablePushError:
 * a token endpoint that is down or refuses the grant fails the job's sends, and the work queue
 * retries them.
 */
import type https from 'node:https';
import fs from 'node:fs';
import crypto from 'node:crypto';
import { SignJWT } from 'jose';
import { httpsPost, safeJson } from './https-post.ts';
import { parseRetryAfter } from './retry.ts';
import { RetryablePushError } from './sender.ts';

export const FCM_SCOPE = 'https://www.googleapis.com/auth/firebase.messaging';
export const GOOGLE_TOKEN_URI = 'https://oauth2.googleapis.com/token';
const REFRESH_MARGIN_MS = 5 * 60_000;
const GRANT_LIFETIME_S = 3600;

/** The fields of a service-account key file this sender uses. */
export interface ServiceAccount {
  client_email: string;
  /** PKCS#8 PEM. */
  private_key: string;
  private_key_id: string | null;
  token_uri: string;
  project_id: string | null;
}

/** Reads and checks a service-account key file (the JSON the Firebase console downloads). */
export function loadServiceAccount(file: string): ServiceAccount {
  const json = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  const str = (name: string): string | null => (typeof json[name] === 'string' && json[name] !== '' ? (json[name] as string) : null);
  const email = str('client_email');
  const key = str('private_key');
  if (json.type !== 'service_account' || email === null || key === null) {
    throw new Error(`${file} is not a service-account key (needs type "service_account", client_email and private_key)`);
  }
  return { client_email: email, private_key: key, private_key_id: str('private_key_id'), token_uri: str('token_uri') ?? GOOGLE_TOKEN_URI, project_id: str('project_id') };
}

export interface FcmAccessTokensOptions {
  agent: https.Agent;
  timeoutMs: number;
  now?: () => number;
}

interface Cached {
  token: string;
  refreshAt: number;
}

export class FcmAccessTokens {
  private readonly signingKey: crypto.KeyObject;
  private readonly now: () => number;
  private cached: Cached | null = null;
  private pending: Promise<Cached> | null = null;

  constructor(
    private readonly account: ServiceAccount,
    private readonly o: FcmAccessTokensOptions,
  ) {
    this.now = o.now ?? Date.now;
    // Checked here, so a wrong key stops the node at start rather than failing every send.
    this.signingKey = crypto.createPrivateKey(account.private_key);
    if (this.signingKey.asymmetricKeyType !== 'rsa') throw new Error('the service account private_key is not an RSA key');
  }

  async get(): Promise<string> {
    if (this.cached !== null && this.now() < this.cached.refreshAt) return this.cached.token;
    this.pending ??= this.exchange().finally(() => {
      this.pending = null;
    });
    this.cached = await this.pending;
    return this.cached.token;
  }

  /** Forgets `token` (FCM answered 401 for it); a newer token is kept. */
  invalidate(token: string): void {
    if (this.cached?.token === token) this.cached = null;
  }

  private async exchange(): Promise<Cached> {
    const iat = Math.floor(this.now() / 1000);
    const assertion = await new SignJWT({ scope: FCM_SCOPE })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(this.account.private_key_id !== null ? { kid: this.account.private_key_id } : {}) })
      .setIssuer(this.account.client_email)
      .setAudience(this.account.token_uri)
      .setIssuedAt(iat)
      .setExpirationTime(iat + GRANT_LIFETIME_S)
      .sign(this.signingKey);
    const form = new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }).toString();
    let res;
    try {
      res = await httpsPost(this.account.token_uri, { 'content-type': 'application/x-www-form-urlencoded' }, form, this.o.agent, this.o.timeoutMs);
    } catch (err) {
      throw new RetryablePushError(`FCM token exchange failed: ${(err as Error).message}`, null);
    }
    const body = safeJson(res.body);
    const token = typeof body.access_token === 'string' ? body.access_token : '';
    if (res.status !== 200 || token === '') {
      const why = typeof body.error === 'string' ? body.error : res.body.slice(0, 200);
      throw new RetryablePushError(`FCM token endpoint answered ${res.status}: ${why}`, res.status, parseRetryAfter(res.headers['retry-after'], this.now()));
    }
    const lifetimeMs = (typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : GRANT_LIFETIME_S) * 1000;
    return { token, refreshAt: this.now() + lifetimeMs - Math.min(REFRESH_MARGIN_MS, lifetimeMs / 2) };
  }
}
