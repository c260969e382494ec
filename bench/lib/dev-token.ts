/**
 * A user access token from the node's embedded development IdP, the way a client application
 * gets one: dev login for an ID token, then an RFC 8693 token exchange for an API access token.
 */
import { BenchError } from './errors.ts';

export interface DevTokenRequest {
  /** Where the IdP is mounted, e.g. http://127.0.0.1:8080/idp */
  idpBaseUrl: string;
  userId: string;
  clientId: string;
  clientSecret: string;
  resource?: string;
  scope?: string;
}

export interface AccessToken {
  token: string;
  /** Epoch ms the token stops working, from `expires_in` or the JWT `exp`; null if neither says. */
  expiresAt: number | null;
}

async function postForm(url: string, form: Record<string, string>): Promise<Record<string, unknown>> {
  const res = await fetch(url, { method: 'POST', body: new URLSearchParams(form), signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  if (!res.ok) throw new BenchError(`POST ${url} answered ${res.status}:\n${text.slice(0, 2000)}`);
  try {
    const json: unknown = JSON.parse(text);
    if (typeof json === 'object' && json !== null && !Array.isArray(json)) return json as Record<string, unknown>;
  } catch {
    // Reported below.
  }
  throw new BenchError(`POST ${url} did not answer a JSON object:\n${text.slice(0, 2000)}`);
}

function field(body: Record<string, unknown>, name: string, url: string): string {
  const value = body[name];
  if (typeof value !== 'string' || value === '') throw new BenchError(`${url} answered without "${name}": ${JSON.stringify(body).slice(0, 2000)}`);
  return value;
}

/** The `exp` claim of a JWT, in epoch ms, without verifying it (the bench only plans around it). */
export function jwtExpiry(jwt: string): number | null {
  try {
    const claims: unknown = JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8'));
    if (typeof claims === 'object' && claims !== null && 'exp' in claims && typeof claims.exp === 'number') return claims.exp * 1000;
  } catch {
    // Not a JWT: no expiry known.
  }
  return null;
}

export async function devUserToken(r: DevTokenRequest): Promise<AccessToken> {
  const loginUrl = `${r.idpBaseUrl}/dev/login`;
  const idToken = field(await postForm(loginUrl, { user_id: r.userId, client_id: r.clientId }), 'id_token', loginUrl);
  const tokenUrl = `${r.idpBaseUrl}/oauth/token`;
  const issuedAt = Date.now();
  const exchanged = await postForm(tokenUrl, {
    grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
    subject_token: idToken,
    subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
    resource: r.resource ?? 'urn:chat:api',
    scope: r.scope ?? 'chat:access',
    client_id: r.clientId,
    client_secret: r.clientSecret,
  });
  const token = field(exchanged, 'access_token', tokenUrl);
  const expiresIn = exchanged.expires_in;
  const expiresAt = typeof expiresIn === 'number' ? issuedAt + expiresIn * 1000 : jwtExpiry(token);
  return { token, expiresAt };
}
