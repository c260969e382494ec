/**
 * The `idempotency_keys` table (+ `idempotency_by_hour`) and the IdempotencyStore.
 *
 * Retention is Cassandra's TTL: every row is written USING TTL 26 h (the 24 h the record answers
 * plus a margin for clock skew), so expired records disappear without a job. Liveness is still
 * decided from created_at (same rule as SQLite), because `at` is the caller's clock and a pending
 * claim expires after a minute, long before its TTL.
 *
 * claim is INSERT IF NOT EXISTS: of concurrent claims exactly one is applied; the others are
 * answered the winner's row by the same round trip. Taking over an expired record or an abandoned
 * claim is a compare-and-set on its created_at, so two requests cannot both take it over.
 */
import type { IdempotencyRecord } from '../records.ts';
import { timestampOrNow } from '../positions.ts';
import { IDEMPOTENCY_PENDING_TTL_MS, IDEMPOTENCY_TTL_MS, type IdempotencyKey, type IdempotencyStore } from '../types-tenant.ts';
import { casLoop, cql, RETRY, type CassandraHandle, type Row } from './cql.ts';
import { numOrNull, str, strOrNull, time, timeOrNull, ts } from './rows.ts';

const KEY = 'principal_key = ? AND idempotency_key = ? AND method_route = ?';
const COLUMNS = 'principal_key, idempotency_key, method_route, request_hash, response_status, response_body, created_at';
/** Seconds a record's rows live: 24 h answered plus 2 h margin. */
export const IDEMPOTENCY_TTL_SECONDS = 26 * 60 * 60;
/** How far before the cutoff sweep() looks: older rows are gone by TTL already. */
const SWEEP_HOURS = 48;
const HOUR_MS = 60 * 60 * 1000;

export const IDEMPOTENCY_CQL = {
  get: cql(`SELECT ${COLUMNS} FROM idempotency_keys WHERE ${KEY}`),
  claim: cql(`INSERT INTO idempotency_keys (principal_key, idempotency_key, method_route, request_hash, created_at) VALUES (?, ?, ?, ?, ?)
    IF NOT EXISTS USING TTL ?`),
  takeOver: cql(`UPDATE idempotency_keys USING TTL ? SET request_hash = ?, response_status = null, response_body = null, created_at = ?
    WHERE ${KEY} IF created_at = ?`),
  complete: cql(`UPDATE idempotency_keys USING TTL ? SET response_status = ?, response_body = ? WHERE ${KEY} IF response_status = null AND created_at = ?`),
  release: cql(`DELETE FROM idempotency_keys WHERE ${KEY} IF response_status = null AND created_at = ?`),
  expire: cql(`DELETE FROM idempotency_keys WHERE ${KEY} IF created_at = ?`),
  hourInsert: cql('INSERT INTO idempotency_by_hour (hour, created_at, principal_key, idempotency_key, method_route) VALUES (?, ?, ?, ?, ?) USING TTL ?'),
  hourSlice: cql('SELECT created_at, principal_key, idempotency_key, method_route FROM idempotency_by_hour WHERE hour = ? AND created_at < ?'),
  hourDelete: cql(`DELETE FROM idempotency_by_hour WHERE hour = ? AND created_at = ? AND ${KEY}`),
};

function minus(at: string, ms: number): string {
  return new Date(Date.parse(at) - ms).toISOString();
}

export function hourOf(iso: string): Date {
  return new Date(Math.floor(Date.parse(iso) / HOUR_MS) * HOUR_MS);
}

function isLive(row: IdempotencyRecord, at: string): boolean {
  const ttl = row.response_status === null ? IDEMPOTENCY_PENDING_TTL_MS : IDEMPOTENCY_TTL_MS;
  return row.created_at > minus(at, ttl);
}

function pickKey(key: IdempotencyKey): string[] {
  if (!key.principal_key || !key.idempotency_key || !key.method_route) throw new RangeError('idempotency key fields must be non-empty');
  return [key.principal_key, key.idempotency_key, key.method_route];
}

/** A stored row, or null when absent or partly expired by TTL. */
function toRecord(row: Row | null): IdempotencyRecord | null {
  if (!row || timeOrNull(row, 'created_at') === null || strOrNull(row, 'request_hash') === null) return null;
  return {
    principal_key: str(row, 'principal_key'),
    idempotency_key: str(row, 'idempotency_key'),
    method_route: str(row, 'method_route'),
    request_hash: str(row, 'request_hash'),
    response_status: numOrNull(row, 'response_status'),
    response_body: strOrNull(row, 'response_body'),
    created_at: time(row, 'created_at'),
  };
}

export class CassandraIdempotencyStore implements IdempotencyStore {
  constructor(private readonly h: CassandraHandle) {}

  async claim(key: IdempotencyKey, request_hash: string, at?: string): ReturnType<IdempotencyStore['claim']> {
    const k = pickKey(key);
    const when = timestampOrNow(at);
    return this.h.op(() =>
      casLoop('idempotency.claim', async () => {
        const first = await this.h.lwt(IDEMPOTENCY_CQL.claim, [...k, request_hash, ts(when), IDEMPOTENCY_TTL_SECONDS]);
        if (!first.applied) {
          const row = toRecord(first.current);
          if (row && isLive(row, when)) return { claimed: false as const, record: row };
          // An expired record, a claim abandoned by a request that died, or a row partly expired
          // by TTL (created_at gone, null): take it over in place, compare-and-set on created_at.
          const taken = await this.h.lwt(IDEMPOTENCY_CQL.takeOver, [IDEMPOTENCY_TTL_SECONDS, request_hash, ts(when), ...k, row ? ts(row.created_at) : null]);
          if (!taken.applied) return RETRY;
        }
        await this.h.rows(IDEMPOTENCY_CQL.hourInsert, [hourOf(when), ts(when), ...k, IDEMPOTENCY_TTL_SECONDS]);
        return { claimed: true as const };
      }),
    );
  }

  async complete(key: IdempotencyKey, response_status: number, response_body: string | null): Promise<boolean> {
    const k = pickKey(key);
    if (!Number.isInteger(response_status)) throw new RangeError('response_status must be an integer');
    return this.h.op(async () => {
      const row = toRecord(await this.h.row(IDEMPOTENCY_CQL.get, k));
      if (!row || row.response_status !== null) return false;
      const done = await this.h.lwt(IDEMPOTENCY_CQL.complete, [IDEMPOTENCY_TTL_SECONDS, response_status, response_body, ...k, ts(row.created_at)]);
      return done.applied;
    });
  }

  async release(key: IdempotencyKey): Promise<void> {
    const k = pickKey(key);
    return this.h.op(async () => {
      const row = toRecord(await this.h.row(IDEMPOTENCY_CQL.get, k));
      if (row && row.response_status === null) await this.h.lwt(IDEMPOTENCY_CQL.release, [...k, ts(row.created_at)]);
    });
  }

  async get(key: IdempotencyKey, at?: string): Promise<IdempotencyRecord | null> {
    const k = pickKey(key);
    const when = timestampOrNow(at);
    return this.h.op(async () => {
      const row = toRecord(await this.h.row(IDEMPOTENCY_CQL.get, k));
      return row && isLive(row, when) ? row : null;
    });
  }

  /** Deletes records created before `at - 24 h`, looking back SWEEP_HOURS hours of buckets. */
  async sweep(at?: string): Promise<number> {
    const cutoff = minus(timestampOrNow(at), IDEMPOTENCY_TTL_MS);
    return this.h.op(async () => {
      let total = 0;
      const last = hourOf(cutoff).getTime();
      for (let hour = last - SWEEP_HOURS * HOUR_MS; hour <= last; hour += HOUR_MS) {
        for (const r of await this.h.rows(IDEMPOTENCY_CQL.hourSlice, [new Date(hour), ts(cutoff)])) {
          const k = [str(r, 'principal_key'), str(r, 'idempotency_key'), str(r, 'method_route')];
          // Only if the record is still the one this entry was written for (not taken over since).
          if ((await this.h.lwt(IDEMPOTENCY_CQL.expire, [...k, r.created_at])).applied) total += 1;
          await this.h.rows(IDEMPOTENCY_CQL.hourDelete, [new Date(hour), r.created_at, ...k]);
        }
      }
      return total;
    });
  }
}
