/**
 * The `idempotency_keys` table (+ `idempotency_by_hour`) and the IdempotencyStore.
 *
 * Retention is Cassandra's TTL: every row is written USING TTL 26 h (the 24 h the record answers
 * plus a margin for clock skew), so expired records disappear without a job. Liveness is still
 * decided from created_at (same rule as SQLite), because `at` is the caller's clock and a pending
 * claim expires after a minute, long before its TTL.
 *
 * claim is INSERT IF NOT EXISTS: of concurrent claims exactly one is applied; the others are
 * answered the winner's row by the same round trip. Replacing an expired record is a
 * compare-and-set on its created_at; taking over a pending claim of a dead process is a
 * compare-and-set on its owner (created_at kept), so two requests cannot both take either over.
 * complete and release are compare-and-sets on the owner: a claim taken over is no longer its old
 * owner's to finish. A released claim stays, ownerless, for the next claim to take over.
 */
import type { IdempotencyRecord } from '../records.ts';
import { StoreClosedError } from '../errors.ts';
import { timestampOrNow } from '../positions.ts';
import { checkKey, checkOwner, claimAction, isLive, minus } from '../idempotency-rules.ts';
import { IDEMPOTENCY_TTL_MS, type ClaimOwner, type IdempotencyKey, type IdempotencyStore } from '../types-tenant.ts';
import { casLoop, cql, RETRY, type CassandraHandle, type Row } from './cql.ts';
import { numOrNull, str, strOrNull, time, timeOrNull, ts } from './rows.ts';

const KEY = 'principal_key = ? AND idempotency_key = ? AND method_route = ?';
const COLUMNS = 'principal_key, idempotency_key, method_route, request_hash, response_status, response_body, created_at, owner';
/** Seconds a record's rows live: 24 h answered plus 2 h margin. */
export const IDEMPOTENCY_TTL_SECONDS = 26 * 60 * 60;
/** How far before the cutoff sweep() looks: older rows are gone by TTL already. */
const SWEEP_HOURS = 48;
const HOUR_MS = 60 * 60 * 1000;
/** Delays between attempts to let go of a claim whose outcome is unknown. */
const ABANDON_RETRY_MS = [200, 1000, 2000, 4000, 8000];

export const IDEMPOTENCY_CQL = {
  get: cql(`SELECT ${COLUMNS} FROM idempotency_keys WHERE ${KEY}`),
  claim: cql(`INSERT INTO idempotency_keys (principal_key, idempotency_key, method_route, request_hash, created_at, owner) VALUES (?, ?, ?, ?, ?, ?)
    IF NOT EXISTS USING TTL ?`),
  renew: cql(`UPDATE idempotency_keys USING TTL ? SET request_hash = ?, response_status = null, response_body = null, created_at = ?, owner = ?
    WHERE ${KEY} IF created_at = ?`),
  takeOver: cql(`UPDATE idempotency_keys USING TTL ? SET owner = ? WHERE ${KEY} IF owner = ? AND response_status = null AND created_at = ?`),
  complete: cql(`UPDATE idempotency_keys USING TTL ? SET response_status = ?, response_body = ? WHERE ${KEY} IF response_status = null AND owner = ?`),
  release: cql(`UPDATE idempotency_keys SET owner = null WHERE ${KEY} IF response_status = null AND owner = ?`),
  /** Lets go of a claim this owner may have made (or taken over) at created_at, whose answer was lost. */
  abandon: cql(`UPDATE idempotency_keys SET owner = null WHERE ${KEY} IF response_status = null AND owner = ? AND created_at = ?`),
  expire: cql(`DELETE FROM idempotency_keys WHERE ${KEY} IF created_at = ?`),
  hourInsert: cql('INSERT INTO idempotency_by_hour (hour, created_at, principal_key, idempotency_key, method_route) VALUES (?, ?, ?, ?, ?) USING TTL ?'),
  hourSlice: cql('SELECT created_at, principal_key, idempotency_key, method_route FROM idempotency_by_hour WHERE hour = ? AND created_at < ?'),
  hourDelete: cql(`DELETE FROM idempotency_by_hour WHERE hour = ? AND created_at = ? AND ${KEY}`),
};

export function hourOf(iso: string): Date {
  return new Date(Math.floor(Date.parse(iso) / HOUR_MS) * HOUR_MS);
}

function pickKey(key: IdempotencyKey): string[] {
  const k = checkKey(key);
  return [k.principal_key, k.idempotency_key, k.method_route];
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
    owner: strOrNull(row, 'owner'),
  };
}

export class CassandraIdempotencyStore implements IdempotencyStore {
  constructor(private readonly h: CassandraHandle) {}

  async claim(key: IdempotencyKey, request_hash: string, by: ClaimOwner, at?: string): ReturnType<IdempotencyStore['claim']> {
    const k = pickKey(key);
    const { owner, live } = checkOwner(by);
    const when = timestampOrNow(at);
    // The created_at a claim in flight writes (its own time, or the time of the claim it takes
    // over): an LWT whose answer is lost may have applied, leaving the key claimed by this live
    // process with nobody to finish it, and every retry answered idempotency_in_progress until the
    // pending bound (a minute). So a claim that fails lets go of it in the background.
    let writing: string | null = null;
    return this.h.op(async () => {
      try {
        return await casLoop('idempotency.claim', async () => {
          writing = when;
          const first = await this.h.lwt(IDEMPOTENCY_CQL.claim, [...k, request_hash, ts(when), owner, IDEMPOTENCY_TTL_SECONDS]);
          writing = null;
          if (first.applied) return this.indexed(k, when);
          // The insert answered the stored row (null when partly expired by TTL: created_at gone).
          const row = toRecord(first.current);
          const action = claimAction(row, request_hash, { owner, live }, when);
          if (action === 'answer') return { claimed: false as const, record: row as IdempotencyRecord };
          if (action === 'take-over') {
            const { created_at } = row as IdempotencyRecord;
            writing = created_at;
            const taken = await this.h.lwt(IDEMPOTENCY_CQL.takeOver, [IDEMPOTENCY_TTL_SECONDS, owner, ...k, (row as IdempotencyRecord).owner, ts(created_at)]);
            writing = null;
            return taken.applied ? { claimed: true as const, created_at } : RETRY;
          }
          writing = when;
          const renewed = await this.h.lwt(IDEMPOTENCY_CQL.renew, [IDEMPOTENCY_TTL_SECONDS, request_hash, ts(when), owner, ...k, row ? ts(row.created_at) : null]);
          writing = null;
          return renewed.applied ? this.indexed(k, when) : RETRY;
        });
      } catch (error) {
        if (writing !== null) this.abandonLater(k, owner, writing);
        throw error;
      }
    });
  }

  /** Releases a claim whose LWT answered no outcome, if it applied: a few attempts over ~15 s. */
  private abandonLater(k: string[], owner: string, created_at: string, attempt = 0): void {
    const delay = ABANDON_RETRY_MS[attempt];
    if (delay === undefined) return; // the pending bound takes over
    setTimeout(() => {
      this.h
        .op(() => this.h.lwt(IDEMPOTENCY_CQL.abandon, [...k, owner, ts(created_at)]))
        .catch((error: unknown) => {
          if (!(error instanceof StoreClosedError)) this.abandonLater(k, owner, created_at, attempt + 1);
        });
    }, delay).unref();
  }

  async complete(key: IdempotencyKey, owner: string, response_status: number, response_body: string | null): Promise<boolean> {
    const k = pickKey(key);
    if (!Number.isInteger(response_status)) throw new RangeError('response_status must be an integer');
    return this.h.op(async () => (await this.h.lwt(IDEMPOTENCY_CQL.complete, [IDEMPOTENCY_TTL_SECONDS, response_status, response_body, ...k, owner])).applied);
  }

  async release(key: IdempotencyKey, owner: string): Promise<void> {
    const k = pickKey(key);
    return this.h.op(async () => void (await this.h.lwt(IDEMPOTENCY_CQL.release, [...k, owner])));
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

  /** A record created at `when`: entered in sweep()'s work list of its hour. */
  private async indexed(k: string[], when: string): Promise<{ claimed: true; created_at: string }> {
    await this.h.rows(IDEMPOTENCY_CQL.hourInsert, [hourOf(when), ts(when), ...k, IDEMPOTENCY_TTL_SECONDS]);
    return { claimed: true, created_at: when };
  }
}
