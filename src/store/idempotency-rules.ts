/**
 * What a claim of an Idempotency-Key does with the record it finds: one rule for every driver
 * (types-tenant.ts IdempotencyStore.claim). Each driver then applies the decision atomically: the
 * SQLite writer inside its transaction, Cassandra by compare-and-set.
 */
import type { IdempotencyRecord } from './records.ts';
import { IDEMPOTENCY_PENDING_TTL_MS, IDEMPOTENCY_TTL_MS, type ClaimOwner, type IdempotencyKey } from './types-tenant.ts';

/**
 * - `new`: no record, or one past its 24 h: a fresh claim created at `at`.
 * - `take-over`: a pending claim of the same request whose process died (or that is stuck past
 *   the pending bound): this process owns it from now on, created_at kept.
 * - `answer`: the record answers the claim (a finished one, a live process's claim, or a claim
 *   made with another request body).
 */
export type ClaimAction = 'new' | 'take-over' | 'answer';

export function minus(at: string, ms: number): string {
  return new Date(Date.parse(at) - ms).toISOString();
}

export function claimAction(row: IdempotencyRecord | null, request_hash: string, by: ClaimOwner, at: string): ClaimAction {
  if (row === null || row.created_at <= minus(at, IDEMPOTENCY_TTL_MS)) return 'new';
  if (row.response_status !== null || row.request_hash !== request_hash) return 'answer';
  const ownerRuns = row.owner !== null && by.live.includes(row.owner);
  return ownerRuns && row.created_at > minus(at, IDEMPOTENCY_PENDING_TTL_MS) ? 'answer' : 'take-over';
}

/** Whether get() answers a record at `at`: finished ones for 24 h, pending ones for the pending bound. */
export function isLive(row: IdempotencyRecord, at: string): boolean {
  const ttl = row.response_status === null ? IDEMPOTENCY_PENDING_TTL_MS : IDEMPOTENCY_TTL_MS;
  return row.created_at > minus(at, ttl);
}

export function checkKey(key: IdempotencyKey): IdempotencyKey {
  if (!key.principal_key || !key.idempotency_key || !key.method_route) throw new RangeError('idempotency key fields must be non-empty');
  return { principal_key: key.principal_key, idempotency_key: key.idempotency_key, method_route: key.method_route };
}

export function checkOwner(by: ClaimOwner): ClaimOwner {
  if (typeof by.owner !== 'string' || by.owner === '' || !Array.isArray(by.live)) throw new RangeError('a claim needs a non-empty owner and the list of live owners');
  return by;
}
