/**
 * The `idempotency_keys` table and the IdempotencyStore. A claim is a row with a NULL
 * response_status and the claiming process as owner; claim, complete and release are each one op
 * of the group commit, so the read and the write of a claim are one transaction: two concurrent
 * claims are serialized, and of two take-overs of a dead owner's claim exactly one finds it still
 * held by that owner.
 */
import type { IdempotencyRecord } from '../records.ts';
import { timestampOrNow } from '../positions.ts';
import { checkKey, checkOwner, claimAction, isLive, minus } from '../idempotency-rules.ts';
import { IDEMPOTENCY_TTL_MS, type ClaimOwner, type IdempotencyKey, type IdempotencyStore } from '../types-tenant.ts';
import type { SqliteHandle } from './shared.ts';

const KEY = 'principal_key = :principal_key AND idempotency_key = :idempotency_key AND method_route = :method_route';
const SWEEP_BATCH = 1000;

type Owned = IdempotencyKey & { owner: string };

export class SqliteIdempotencyStore implements IdempotencyStore {
  private readonly getStmt;
  private readonly claimStmt;
  private readonly takeOverStmt;
  private readonly completeStmt;
  private readonly releaseStmt;
  private readonly sweepStmt;

  constructor(private readonly h: SqliteHandle) {
    const db = h.db;
    this.getStmt = db.prepare<[IdempotencyKey], IdempotencyRecord>(`SELECT * FROM idempotency_keys WHERE ${KEY}`);
    // A new record, or one past its 24 h replaced in place.
    this.claimStmt = db.prepare<[Owned & { request_hash: string; at: string }]>(`INSERT INTO idempotency_keys
        (principal_key, idempotency_key, method_route, request_hash, response_status, response_body, created_at, owner)
      VALUES (:principal_key, :idempotency_key, :method_route, :request_hash, NULL, NULL, :at, :owner)
      ON CONFLICT DO UPDATE SET request_hash = excluded.request_hash, response_status = NULL, response_body = NULL,
        created_at = excluded.created_at, owner = excluded.owner`);
    this.takeOverStmt = db.prepare<[Owned]>(`UPDATE idempotency_keys SET owner = :owner WHERE ${KEY} AND response_status IS NULL`);
    this.completeStmt = db.prepare<[Owned & { status: number; body: string | null }]>(
      `UPDATE idempotency_keys SET response_status = :status, response_body = :body WHERE ${KEY} AND response_status IS NULL AND owner = :owner`,
    );
    // Released, the claim stays ownerless: the next claim of the same request takes it over at once.
    this.releaseStmt = db.prepare<[Owned]>(`UPDATE idempotency_keys SET owner = NULL WHERE ${KEY} AND response_status IS NULL AND owner = :owner`);
    this.sweepStmt = db.prepare<[string, number]>(`DELETE FROM idempotency_keys WHERE (principal_key, idempotency_key, method_route) IN
      (SELECT principal_key, idempotency_key, method_route FROM idempotency_keys WHERE created_at < ? LIMIT ?)`);
  }

  async claim(key: IdempotencyKey, request_hash: string, by: ClaimOwner, at?: string): ReturnType<IdempotencyStore['claim']> {
    const k = checkKey(key);
    const { owner, live } = checkOwner(by);
    const when = timestampOrNow(at);
    return this.h.write(() => {
      const row = this.getStmt.get(k) ?? null;
      const action = claimAction(row, request_hash, { owner, live }, when);
      if (action === 'answer') return { claimed: false as const, record: row as IdempotencyRecord };
      if (action === 'take-over') {
        // The same transaction read it pending under a dead owner: no other claim got between.
        this.takeOverStmt.run({ owner, ...k });
        return { claimed: true as const, created_at: (row as IdempotencyRecord).created_at };
      }
      this.claimStmt.run({ request_hash, at: when, owner, ...k });
      return { claimed: true as const, created_at: when };
    });
  }

  async complete(key: IdempotencyKey, owner: string, response_status: number, response_body: string | null): Promise<boolean> {
    const k = checkKey(key);
    if (!Number.isInteger(response_status)) throw new RangeError('response_status must be an integer');
    return this.h.write(() => this.completeStmt.run({ status: response_status, body: response_body, owner, ...k }).changes > 0);
  }

  async release(key: IdempotencyKey, owner: string): Promise<void> {
    const k = checkKey(key);
    await this.h.write(() => this.releaseStmt.run({ owner, ...k }));
  }

  async get(key: IdempotencyKey, at?: string): Promise<IdempotencyRecord | null> {
    const k = checkKey(key);
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
