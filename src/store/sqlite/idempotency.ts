/**
 * The `idempotency_keys` table and the IdempotencyStore. A claim is a row with a NULL
 * response_status; claim, complete and release are each one op of the group commit, so two
 * concurrent claims are serialized and exactly one finds no live row.
 */
import type { IdempotencyRecord } from '../records.ts';
import { timestampOrNow } from '../positions.ts';
import { IDEMPOTENCY_PENDING_TTL_MS, IDEMPOTENCY_TTL_MS, type IdempotencyKey, type IdempotencyStore } from '../types-tenant.ts';
import type { SqliteHandle } from './shared.ts';

const KEY = 'principal_key = :principal_key AND idempotency_key = :idempotency_key AND method_route = :method_route';
const SWEEP_BATCH = 1000;

function minus(at: string, ms: number): string {
  return new Date(Date.parse(at) - ms).toISOString();
}

/** Whether a record still answers at `at`: finished ones for 24 h, pending ones for a minute. */
function isLive(row: IdempotencyRecord, at: string): boolean {
  const ttl = row.response_status === null ? IDEMPOTENCY_PENDING_TTL_MS : IDEMPOTENCY_TTL_MS;
  return row.created_at > minus(at, ttl);
}

function pickKey(key: IdempotencyKey): IdempotencyKey {
  if (!key.principal_key || !key.idempotency_key || !key.method_route) throw new RangeError('idempotency key fields must be non-empty');
  return { principal_key: key.principal_key, idempotency_key: key.idempotency_key, method_route: key.method_route };
}

export class SqliteIdempotencyStore implements IdempotencyStore {
  private readonly getStmt;
  private readonly claimStmt;
  private readonly completeStmt;
  private readonly releaseStmt;
  private readonly sweepStmt;

  constructor(private readonly h: SqliteHandle) {
    const db = h.db;
    this.getStmt = db.prepare<[IdempotencyKey], IdempotencyRecord>(`SELECT * FROM idempotency_keys WHERE ${KEY}`);
    this.claimStmt = db.prepare<[IdempotencyKey & { request_hash: string; at: string }]>(`INSERT INTO idempotency_keys
        (principal_key, idempotency_key, method_route, request_hash, response_status, response_body, created_at)
      VALUES (:principal_key, :idempotency_key, :method_route, :request_hash, NULL, NULL, :at)
      ON CONFLICT DO UPDATE SET request_hash = excluded.request_hash, response_status = NULL, response_body = NULL, created_at = excluded.created_at`);
    this.completeStmt = db.prepare<[IdempotencyKey & { status: number; body: string | null }]>(
      `UPDATE idempotency_keys SET response_status = :status, response_body = :body WHERE ${KEY} AND response_status IS NULL`,
    );
    this.releaseStmt = db.prepare<[IdempotencyKey]>(`DELETE FROM idempotency_keys WHERE ${KEY} AND response_status IS NULL`);
    this.sweepStmt = db.prepare<[string, number]>(`DELETE FROM idempotency_keys WHERE (principal_key, idempotency_key, method_route) IN
      (SELECT principal_key, idempotency_key, method_route FROM idempotency_keys WHERE created_at < ? LIMIT ?)`);
  }

  async claim(key: IdempotencyKey, request_hash: string, at?: string): ReturnType<IdempotencyStore['claim']> {
    const k = pickKey(key);
    const when = timestampOrNow(at);
    return this.h.write(() => {
      const row = this.getStmt.get(k);
      if (row && isLive(row, when)) return { claimed: false as const, record: row };
      // An expired record, or a claim abandoned by a request that died, is taken over in place.
      this.claimStmt.run({ request_hash, at: when, ...k });
      return { claimed: true as const };
    });
  }

  async complete(key: IdempotencyKey, response_status: number, response_body: string | null): Promise<boolean> {
    const k = pickKey(key);
    if (!Number.isInteger(response_status)) throw new RangeError('response_status must be an integer');
    return this.h.write(() => this.completeStmt.run({ status: response_status, body: response_body, ...k }).changes > 0);
  }

  async release(key: IdempotencyKey): Promise<void> {
    const k = pickKey(key);
    await this.h.write(() => this.releaseStmt.run(k));
  }

  async get(key: IdempotencyKey, at?: string): Promise<IdempotencyRecord | null> {
    const k = pickKey(key);
    const when = timestampOrNow(at);
    return this.h.read(() => {
      const row = this.getStmt.get(k);
      return row && isLive(row, when) ? row : null;
    });
  }

  async sweep(at?: string): Promise<number> {
    const cutoff = minus(timestampOrNow(at), IDEMPOTENCY_TTL_MS);
    let total = 0;
    for (;;) {
      const n = await this.h.write(() => this.sweepStmt.run(cutoff, SWEEP_BATCH).changes);
      total += n;
      if (n < SWEEP_BATCH) return total;
    }
  }
}
