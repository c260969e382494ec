/**
 * What every table file of the Cassandra driver shares: the statement descriptor, the narrow
 * client interface the driver needs (the real `cassandra.Client` satisfies it; the statement
 * tests pass a recording stand-in), and the handle that runs statements with the driver's
 * consistency rules, keeps per-conversation call order, and refuses work after close().
 *
 * Consistency (one rule, applied here so no table file can forget it):
 *  - every read and write: LOCAL_QUORUM. A read after an acknowledged write in the same data
 *    center overlaps the write's replicas, so it sees it ("a read issued after a write resolved
 *    sees that write"), and one replica down per range is tolerated at RF 3;
 *  - lightweight transactions (`IF ...`): serial consistency LOCAL_SERIAL (Paxos among the local
 *    data center's replicas; the commit itself is LOCAL_QUORUM like any write). Fencing is only
 *    as strong as the data center that runs the actors: one region owns a conversation.
 * Every statement is prepared (`prepare: true`): the driver then knows the partition key of
 * each bound statement, and the TokenAwarePolicy sends it straight to a replica.
 */
import cassandra from 'cassandra-driver';
import { StoreClosedError, StoreUnavailableError } from '../errors.ts';

const { consistencies } = cassandra.types;

/** One CQL statement as the driver prepares it; `lwt` marks a lightweight transaction. */
export interface Cql {
  readonly cql: string;
  readonly lwt: boolean;
}

export function cql(text: string): Cql {
  const normalized = text.replace(/\s+/g, ' ').trim();
  return { cql: normalized, lwt: /\sIF\s/i.test(normalized) };
}

/** A row as the driver answers it: column name to value (driver types: Long, Date, LocalDate). */
export type Row = Readonly<Record<string, unknown>>;

export interface QueryOptions {
  prepare: boolean;
  consistency: number;
  serialConsistency?: number;
  isIdempotent: boolean;
  logged?: boolean;
  fetchSize?: number;
}

/** The part of `cassandra.Client` the driver uses. */
export interface CqlClient {
  execute(query: string, params: unknown[], options: QueryOptions): Promise<{ rows: readonly Row[] }>;
  batch(queries: Array<{ query: string; params: unknown[] }>, options: QueryOptions): Promise<unknown>;
  shutdown(): Promise<void>;
}

/** `unset` leaves a column untouched (protocol v4): one prepared UPDATE serves every patch shape. */
export const UNSET: unknown = (cassandra.types as unknown as { unset: object }).unset;

export function optionsFor(stmt: Cql): QueryOptions {
  return stmt.lwt
    ? { prepare: true, consistency: consistencies.localQuorum, serialConsistency: consistencies.localSerial, isIdempotent: false }
    : // Every plain statement writes explicit values (no counters, no list appends), so a retry or
      // a speculative execution cannot apply it twice with a different effect.
      { prepare: true, consistency: consistencies.localQuorum, isIdempotent: true };
}

/** Statements run so far, by kind (a logged batch counts once): what a send costs the cluster. */
export interface StatementCounts {
  plain: number;
  lwt: number;
  batches: number;
  /** Of the batches, those sent unlogged (a replica was down). */
  unlogged: number;
}

export class CassandraHandle {
  readonly counts: StatementCounts = { plain: 0, lwt: 0, batches: 0, unlogged: 0 };
  /** Whether the driver knows a host of the local data center down; set by the store's open(). */
  replicaDown: () => boolean = () => false;
  private degradedUntil = 0;
  private closed = false;
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly lanes = new Map<string, Lane>();

  constructor(readonly client: CqlClient) {}

  async rows(stmt: Cql, params: unknown[]): Promise<readonly Row[]> {
    try {
      return await this.exec(stmt, params);
    } catch (error) {
      throw storeError(error);
    }
  }

  async row(stmt: Cql, params: unknown[]): Promise<Row | null> {
    return (await this.rows(stmt, params))[0] ?? null;
  }

  /**
   * Runs a lightweight transaction. `applied` false comes with the current values of the columns
   * its IF names (all null, or absent, when the row does not exist).
   */
  async lwt(stmt: Cql, params: unknown[]): Promise<{ applied: boolean; current: Row }> {
    if (!stmt.lwt) throw new Error(`not a lightweight transaction: ${stmt.cql}`);
    const started = Date.now();
    for (let attempt = 1; ; attempt += 1) {
      try {
        const current = (await this.exec(stmt, params))[0] ?? {};
        return { applied: current['[applied]'] === true, current };
      } catch (error) {
        // Paxos contention (many proposers on one partition: concurrent creates of one DIRECT
        // pair, concurrent claims of one idempotency key). The outcome is unknown, and every LWT
        // of this driver can be re-run: its conditions then answer the state the first attempt
        // left (callers re-classify). Jittered backoff so the proposers stop colliding. Not past
        // LWT_RETRY_MS: replicas that stopped answering time out the same way, and the caller
        // must get its 503 soon, not after several server timeouts.
        if (attempt >= LWT_ATTEMPTS || !isCasTimeout(error) || Date.now() - started > LWT_RETRY_MS) throw storeError(error);
        await new Promise((resolve) => setTimeout(resolve, attempt * (5 + Math.random() * 45)));
      }
    }
  }

  private async exec(stmt: Cql, params: unknown[]): Promise<readonly Row[]> {
    if (stmt.lwt) this.counts.lwt += 1;
    else this.counts.plain += 1;
    return (await this.client.execute(stmt.cql, params, optionsFor(stmt))).rows;
  }

  /**
   * A logged batch: once the coordinator has written it to its batchlog, every statement is
   * eventually applied, even if the coordinator dies, so derived rows (listings, indexes) never
   * stay half-updated. Not for LWTs (those must be single-partition) and not a transaction:
   * readers may see part of it for a moment.
   *
   * While a replica is down (the driver lost every connection to a host of the local data
   * center, or a batchlog write just failed), batches go unlogged: a coordinator writes the
   * batchlog to two other nodes chosen among those its failure detector still thinks alive, so
   * on a ring of three every logged batch waits for the dead node and times out until it is
   * convicted (~20 s with phi_convict_threshold 8; docs/storage.md "When a replica dies"). An
   * unlogged batch writes each partition at LOCAL_QUORUM, which two replicas of three answer.
   * A logged batch refused at its batchlog is sent again unlogged at once. The batchlog entry one
   * node may have kept is replayed later with the first attempt's (older) write time: the same
   * cells, which lose to the retry's and to any later change.
   */
  async batch(items: ReadonlyArray<readonly [Cql, unknown[]]>): Promise<void> {
    if (items.length === 0) return;
    if (items.some(([s]) => s.lwt)) throw new Error('a multi-partition batch cannot hold a lightweight transaction');
    if (items.length === 1) {
      const [stmt, params] = items[0]!;
      await this.rows(stmt, params);
      return;
    }
    // Cassandra refuses batches above batch_size_fail_threshold (50 KB by default): a large one
    // (the members of a big new conversation) goes as several, each still all-or-nothing. Their
    // writers commit last through the conversation row, so a partial set stays invisible.
    for (let i = 0; i < items.length; i += MAX_BATCH) {
      const queries = items.slice(i, i + MAX_BATCH).map(([s, params]) => ({ query: s.cql, params }));
      const send = (logged: boolean): Promise<unknown> => {
        this.counts.batches += 1;
        if (!logged) this.counts.unlogged += 1;
        return this.client.batch(queries, { prepare: true, consistency: consistencies.localQuorum, isIdempotent: true, logged });
      };
      try {
        const logged = !this.degraded();
        try {
          await send(logged);
        } catch (error) {
          if (!logged || !isBatchlogFailure(error)) throw error;
          this.degradedUntil = Date.now() + DEGRADED_MS;
          await send(false);
        }
      } catch (error) {
        throw storeError(error);
      }
    }
  }

  /** Whether batches go unlogged now (see batch()). */
  degraded(): boolean {
    return Date.now() < this.degradedUntil || this.replicaDown();
  }

  /** Any store operation: refused after close(), awaited by close(). */
  op<T>(fn: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new StoreClosedError());
    const p = fn();
    this.inFlight.add(p);
    const done = (): void => void this.inFlight.delete(p);
    p.then(done, done);
    return p;
  }

  /**
   * A write that must apply in call order with the other writes of `key` (a conversation, a
   * tenant's settings...): it starts once every earlier write of `key` settled. Cassandra gives
   * no order between concurrent requests, so this queue is what keeps "unawaited writes of one
   * caller apply in call order"; fencing and LWTs keep order between processes.
   */
  serial<T>(key: string, fn: () => Promise<T>): Promise<T> {
    return this.op(() => {
      const lane = this.lane(key);
      const run = lane.settled.then(fn, fn);
      lane.admitted = lane.settled = this.track(key, lane, settle(run));
      return run;
    });
  }

  /**
   * A write of `key` that may overlap with the next ones of its kind (appends): `admit` runs in
   * call order, once the previous pipelined write of `key` was admitted and every earlier serial
   * one settled; `rest` then runs while later pipelined writes are admitted; a later serial write
   * waits for `rest` too. So admissions (seq checks, range reservations) are ordered, the writes
   * themselves overlap, and every other write still sees them all applied.
   */
  pipelined<A, T>(key: string, admit: () => Promise<A>, rest: (admitted: A) => Promise<T>): Promise<T> {
    return this.op(() => {
      const lane = this.lane(key);
      const admission = lane.admitted.then(admit);
      const run = admission.then(rest);
      lane.admitted = settle(admission);
      lane.settled = this.track(key, lane, Promise.all([lane.settled, settle(run)]).then(noop));
      return run;
    });
  }

  private lane(key: string): Lane {
    let lane = this.lanes.get(key);
    if (lane === undefined) {
      lane = { admitted: Promise.resolve(), settled: Promise.resolve() };
      this.lanes.set(key, lane);
    }
    return lane;
  }

  /** Forgets the lane once `settled` is its last write and it settled. */
  private track(key: string, lane: Lane, settled: Promise<void>): Promise<void> {
    void settled.then(() => {
      if (lane.settled === settled && this.lanes.get(key) === lane) this.lanes.delete(key);
    });
    return settled;
  }

  /** Refuses new work, waits for what is running, then closes the connections. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.inFlight]);
    await this.client.shutdown();
  }
}

/** Retries a compare-and-set step that lost to a concurrent writer; gives up loudly. */
export async function casLoop<T>(what: string, step: () => Promise<T | typeof RETRY>, attempts = 8): Promise<T> {
  for (let i = 0; i < attempts; i += 1) {
    const result = await step();
    if (result !== RETRY) return result;
  }
  throw new Error(`${what}: lost ${attempts} compare-and-set rounds in a row`);
}

export const RETRY: unique symbol = Symbol('retry');

/** Where a key's writes stand: the next pipelined write may be admitted / everything settled. */
interface Lane {
  admitted: Promise<void>;
  settled: Promise<void>;
}

const noop = (): void => {};
const settle = (p: Promise<unknown>): Promise<void> => p.then(noop, noop);

/** How long batches stay unlogged after a batchlog write failed (the failure detector's conviction is ~20 s). */
const DEGRADED_MS = 30_000;

/**
 * A logged batch refused at its batchlog, before any of its statements was sent: a write timeout
 * of type BATCH_LOG, or too few live batchlog endpoints (consistency ONE or TWO, the batchlog's;
 * our own statements run at LOCAL_QUORUM).
 */
export function isBatchlogFailure(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as { code?: unknown; writeType?: unknown; consistencies?: unknown };
  if (e.code === WRITE_TIMEOUT) return e.writeType === 'BATCH_LOG';
  return e.code === CODES.unavailableException && (e.consistencies === consistencies.one || e.consistencies === consistencies.two);
}

const LWT_ATTEMPTS = 4;
/** No new attempt of a timed-out LWT once this long has passed since the first one started. */
const LWT_RETRY_MS = 2500;
const MAX_BATCH = 64;
/** Protocol error code of a write timeout (cassandra.types.responseErrorCodes.writeTimeout). */
const WRITE_TIMEOUT = 0x1100;

const { responseErrorCodes: CODES } = cassandra.types;
/**
 * Server answers that mean "not now": too few replicas, timeouts, overload, a joining node, and a
 * replica that failed the request (read/write failure: a node dying or restarting, its schema not
 * caught up yet; seen in the replication-fault tests as a 500 right after a node died).
 */
const UNAVAILABLE_CODES = new Set<number>([CODES.unavailableException, CODES.overloaded, CODES.isBootstrapping, CODES.writeTimeout, CODES.readTimeout, CODES.readFailure, CODES.writeFailure]);

/**
 * The driver's error as the store reports it: StoreUnavailableError (retryable, a 503 at the API)
 * when the cluster could not serve the request at our consistency now: no host reachable, the
 * client's own timeout, a connection that broke under the request, or one of UNAVAILABLE_CODES.
 * Anything else (a bad statement, a bug) stays what it is and becomes a 500.
 */
export function storeError(error: unknown): unknown {
  const { NoHostAvailableError, OperationTimedOutError, BusyConnectionError, ResponseError, DriverError } = cassandra.errors;
  const unavailable =
    error instanceof NoHostAvailableError ||
    error instanceof OperationTimedOutError ||
    error instanceof BusyConnectionError ||
    // The connection to the coordinator broke with the request on it (the node died): the driver
    // retries only idempotent statements elsewhere, so an LWT or a batch surfaces this.
    (error instanceof DriverError && (error as { isSocketError?: unknown }).isSocketError === true) ||
    (error instanceof ResponseError && UNAVAILABLE_CODES.has(error.code)) ||
    // A host whose connections all closed a moment ago (it died) and that the driver still tries
    // (re-preparing a statement there): cassandra-driver throws a plain Error for it.
    (error instanceof Error && error.message === 'No connection available');
  return unavailable ? new StoreUnavailableError((error as Error).message, { cause: error }) : error;
}

/** A Paxos round that timed out (contention or a slow replica): the write may or may not apply. */
export function isCasTimeout(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as { code?: unknown; writeType?: unknown };
  return e.code === WRITE_TIMEOUT && e.writeType === 'CAS';
}
