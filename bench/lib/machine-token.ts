/**
 * A machine access token from the node's development IdP: the `client_credentials` grant of a
 * backend client, as a backend would get one. Machine tokens of the demo fixture live an hour,
 * long enough for any bench run (callers still check `expiresAt` against their plan).
 */
import { jwtExpiry, type AccessToken } from './dev-token.ts';
import { BenchError } from './errors.ts';

export interface MachineTokenRequest {
  /** Where the IdP is mounted, e.g. http://127.0.0.1:8080/idp */
  idpBaseUrl: string;
  clientId: string;
  clientSecret: string;
  scope?: string;
}

export async function devMachineToken(r: MachineTokenRequest): Promise<AccessToken> {
  const url = `${r.idpBaseUrl}/oauth/token`;
  const form: Record<string, string> = { grant_type: 'client_credentials', client_id: r.clientId, client_secret: r.clientSecret };
  if (r.scope) form.scope = r.scope;
  const issuedAt = Date.now();
  const res = await fetch(url, { method: 'POST', body: new URLSearchParams(form), signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  if (!res.ok) throw new BenchError(`POST ${url} (client_credentials for ${r.clientId}) answered ${res.status}:\n${text.slice(0, 2000)}`);
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new BenchError(`POST ${url} did not answer JSON:\n${text.slice(0, 2000)}`);
  }
  const token = body.access_token;
  if (typeof token !== 'string' || token === '') throw new BenchError(`${url} answered without "access_token": ${text.slice(0, 2000)}`);
  const expiresIn = body.expires_in;
  return { token, expiresAt: typeof expiresIn === 'number' ? issuedAt + expiresIn * 1000 : jwtExpiry(token) };
}
