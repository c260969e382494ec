/** Calls and shared error checks for the administration routes. */
import assert from 'node:assert/strict';
import { assertErrorBody, bearer, request, type Res } from './http.ts';

export type Call = (method: string, path: string, token?: string, body?: unknown) => Promise<Res>;

export function caller(base: string): Call {
  return (method, path, token, body) =>
    request(`${base}${path}`, {
      method,
      headers: { ...(token ? bearer(token) : {}), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
}

/** Tokens the shared checks use: alice (acme owner, via chat-web), bob unbound and bound to acme/support, mallory, a machine. */
export interface AdminTokens {
  alice: string;
  bob: string;
  bobBound: string;
  mallory: string;
  machine: string;
}

/**
 * The errors every administration route shares, for one method and path under /tenants/acme:
 * 401, principal_not_allowed (machines), missing_capability (bob), not_tenant_member,
 * tenant_not_available, client_context_mismatch and invalid_request (an unknown query parameter);
 * with a body also invalid_json, unsupported_media_type and payload_too_large.
 */
export async function commonAdminErrors(api: string, tok: AdminTokens, method: string, path: string, body?: unknown): Promise<void> {
  const call = caller(api);
  assertErrorBody(await call(method, path, undefined, body), 401, 'invalid_token', `/api/v1${path.split('?')[0]}`);
  assertErrorBody(await call(method, path, tok.machine, body), 403, 'principal_not_allowed');
  const bob = await call(method, path, tok.bob, body);
  assertErrorBody(bob, 403, 'missing_capability');
  assert.match(bob.json().message, /administration\./);
  assertErrorBody(await call(method, path, tok.mallory, body), 403, 'not_tenant_member');
  assertErrorBody(await call(method, path.replace('/tenants/acme/', '/tenants/initech/'), tok.alice, body), 403, 'tenant_not_available');
  assertErrorBody(await call(method, path.replace('/tenants/acme/', '/tenants/globex/'), tok.bobBound, body), 403, 'client_context_mismatch');
  const sep = path.includes('?') ? '&' : '?';
  assertErrorBody(await call(method, `${path}${sep}x=1`, tok.alice, body), 400, 'invalid_request');
  if (body === undefined) return;
  const raw = (headers: Record<string, string>, payload: string) => request(`${api}${path}`, { method, headers: { ...bearer(tok.alice), ...headers }, body: payload });
  assertErrorBody(await raw({ 'Content-Type': 'application/json' }, '{"role_id":'), 400, 'invalid_json');
  assertErrorBody(await raw({ 'Content-Type': 'text/plain' }, JSON.stringify(body)), 415, 'unsupported_media_type');
  assertErrorBody(await raw({ 'Content-Type': 'application/json' }, JSON.stringify({ pad: 'x'.repeat(300_000) })), 413, 'payload_too_large');
}
