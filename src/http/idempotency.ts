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
 *   recorded (the key is released, a retry runs again, with the same ids: a 5xx may follow a
 *   write that committed): 5xx and 429.
 * - Checked after authentication, validation and the context check — a request refused there
 *   never ran, so nothing is recorded — and before the per-user rate limit, so replays are free.
 *
 * Crash safety: the record is not written in the mutation's transaction, so a process can die
 * between the two. Hence (docs/storage.md, "Idempotency records"):
 * - What a keyed request creates (a message, a conversation) gets an id derived from the key and
 *   its first claim time (`idempotentId`). A re-run of the key writes the same id, and the store
 *   answers the row already there instead of writing a second one: the mutation is its own mark,
 *   atomically, whichever store. Other mutations set a state; a re-run sets it again.
 * - A pending claim belongs to a process (ClaimOwner). A retry finding the claim of a process
 *   that is gone (restarted; in a cluster, out of the live membership) takes it over at once,
 *   keeping the claim time, so it re-runs with the same ids; a live process's claim is still
 *   `idempotency_in_progress`. The old owner can no longer record a response for it.
 */
import crypto from 'node:crypto';
import { uuidv7Of } from '../actors/ids.ts';
import { ApiError } from '../errors/catalog.ts';
import type { Principal } from '../identity/types.ts';
import type { ChatStore, ClaimOwner, IdempotencyKey } from '../store/index.ts';

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

/** A key this request holds: the running request records its response under it. */
export interface Claim {
  key: IdempotencyKey;
  owner: string;
  /** The key's first claim time (kept across take-overs). */
  created_at: string;
}

/** This process as the owner of its claims, when no cluster membership says who else runs. */
const PROCESS = crypto.randomUUID();
export const SOLE_PROCESS: ClaimOwner = { owner: PROCESS, live: [PROCESS] };

/** Claims the key: the claim when this request runs; the recorded response when it is a retry. */
export async function begin(store: ChatStore, by: ClaimOwner, key: IdempotencyKey, raw: Buffer | null): Promise<Replay | Claim> {
  const hash = crypto.createHash('sha256').update(raw ?? Buffer.alloc(0)).digest('base64url');
  const r = await store.idempotency.claim(key, hash, by);
  if (r.claimed) return { key, owner: by.owner, created_at: r.created_at };
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
export async function finish(store: ChatStore, claim: Claim, status: number, body: string | null): Promise<void> {
  const record = async (): Promise<void> => {
    if (status >= 500 || status === 429) await store.idempotency.release(claim.key, claim.owner);
    else await store.idempotency.complete(claim.key, claim.owner, status, body);
  };
  try {
    await record();
  } catch {
    // The store failed to record the outcome (a replica dying, say). The request's own answer
    // still goes out: the mutation is done (or, for a 5xx, the client retries it). Meanwhile the
    // claim still names this live process, so a retry is told idempotency_in_progress; recording
    // again in the background frees it within seconds instead of the pending bound (a minute).
    recordLater(record);
  }
}

/** Delays between background attempts to record an outcome (~31 s in all, within the pending bound). */
const RECORD_RETRY_MS = [500, 1000, 2000, 4000, 8000, 16_000];

function recordLater(record: () => Promise<void>, attempt = 0): void {
  const delay = RECORD_RETRY_MS[attempt];
  if (delay === undefined) return; // the pending bound takes over
  setTimeout(() => void record().catch(() => recordLater(record, attempt + 1)), delay).unref();
}

/** The id of what the claimed request creates: the same in every run of the key (see above). */
export function idempotentId(claim: Claim): string {
  const { principal_key, idempotency_key, method_route } = claim.key;
  return uuidv7Of(Date.parse(claim.created_at), JSON.stringify([principal_key, idempotency_key, method_route]));
}
