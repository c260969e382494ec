/**
 * Idempotent retries of mutating calls (`Idempotency-Key` header, docs/api.md):
 *
 * - Any POST, PUT, PATCH or DELETE by an authenticated principal may carry a key (1-255 visible
 *   ASCII characters). Keys are scoped to the principal and the method + concrete path, and live
 *   24 h (store: IDEMPOTENCY_TTL_MS).
 * - The first request claims the key, runs, and its response is recorded before it is sent, so a
 *   retry after a lost response can never run the operation twice.
 * - A retry with the same key and the same body gets the recorded response again, with
 *   `Idempotent-Replayed: true`; with a different body, `idempotency_key_reused` (422); while the
 *   first is still running, `idempotency_in_progress` (409, Retry-After: 1).
 * - Recorded: every response the operation itself produced (2xx and its 4xx refusals). Not
 *   recorded (the key is released, a retry runs again): 5xx and 429.
 * - Checked after authentication, validation and the context check — a request refused there
 *   never ran, so nothing is recorded — and before the per-user rate limit, so replays are free.
 */
import crypto from 'node:crypto';
import { ApiError } from '../errors/catalog.ts';
import type { Principal } from '../identity/types.ts';
import type { ChatStore, IdempotencyKey } from '../store/index.ts';

export interface Replay {
  status: number;
  body: string | null;
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const KEY_SYNTAX = /^[\x21-\x7e]{1,255}$/;

export function appliesTo(method: string, principal: Principal | null, header: string | undefined): header is string {
  return header !== undefined && principal !== null && MUTATING.has(method);
}

export function keyFor(principal: Principal, method: string, path: string, header: string): IdempotencyKey {
  if (!KEY_SYNTAX.test(header)) throw new ApiError('invalid_request', ['header.idempotency-key: must be 1 to 255 visible ASCII characters']);
  const who = principal.type === 'user' ? `user:${principal.user_id}` : `client:${principal.client_id}`;
  return { principal_key: who, idempotency_key: header, method_route: `${method} ${path}` };
}

/** Claims the key: null when this request runs; the recorded response when it is a retry. */
export async function begin(store: ChatStore, key: IdempotencyKey, raw: Buffer | null): Promise<Replay | null> {
  const hash = crypto.createHash('sha256').update(raw ?? Buffer.alloc(0)).digest('base64url');
  const r = await store.idempotency.claim(key, hash);
  if (r.claimed) return null;
  const { record } = r;
  if (record.request_hash !== hash) {
    throw new ApiError('idempotency_key_reused', 'this Idempotency-Key was used with a different request body; use a new key');
  }
  if (record.response_status === null) {
    throw new ApiError('idempotency_in_progress', 'a request with this Idempotency-Key is still running; retry shortly', { 'Retry-After': '1' });
  }
  return { status: record.response_status, body: record.response_body };
}

/** Records the response (before it is sent) or releases the key for responses not to replay. */
export async function finish(store: ChatStore, key: IdempotencyKey, status: number, body: string | null): Promise<void> {
  if (status >= 500 || status === 429) await store.idempotency.release(key);
  else await store.idempotency.complete(key, status, body);
}
