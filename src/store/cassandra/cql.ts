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
import { StoreClosedError } from '../errors.ts';

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

export class CassandraHandle {
  private closed = false;
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly tails = new Map<string, Promise<unknown>>();

  constructor(readonly client: CqlClient) {}

  async rows(stmt: Cql, params: unknown[]): Promise<readonly Row[]> {
    return (await this.client.execute(stmt.cql, params, optionsFor(stmt))).rows;
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
    for (let attempt = 1; ; attempt += 1) {
      try {
        const current = (await this.rows(stmt, params))[0] ?? {};
        return { applied: current['[applied]'] === true, current };
      } catch (error) {
        if (attempt >= LWT_ATTEMPTS || !isCasTimeout(error)) throw error;
        // Paxos contention (many proposers on one partition: concurrent creates of one DIRECT
        // pair, concurrent claims of one idempotency key). The outcome is unknown, and every LWT
        // of this driver can be re-run: its conditions then answer the state the first attempt
        // left (callers re-classify). Jittered backoff so the proposers stop colliding.
        await new Promise((resolve) => setTimeout(resolve, attempt * (5 + Math.random() * 45)));
      }
    }
  }

  /**
   * A logged batch: once the coordinator has written it to its batchlog, every statement is
   * eventually applied, even if the coordinator dies, so derived rows (listings, indexes) never
   * stay half-updated. Not for LWTs (those must be single-partition) and not a transaction:
   * readers may see part of it for a moment.
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
      await this.client.batch(
        items.slice(i, i + MAX_BATCH).map(([s, params]) => ({ query: s.cql, params })),
        { prepare: true, consistency: consistencies.localQuorum, isIdempotent: true, logged: true },
      );
    }
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
   * tenant's settings...): it starts once the previous one settled. Cassandra gives no order
   * between concurrent requests, so this queue is what keeps "unawaited writes of one caller
   * apply in call order"; fencing and LWTs keep order between processes.
   */
  serial<T>(key: string, fn: () => Promise<T>): Promise<T> {
    return this.op(() => {
      const previous = this.tails.get(key) ?? Promise.resolve();
      const run = previous.then(fn, fn);
      const tail = run.then(
        () => undefined,
        () => undefined,
      );
      this.tails.set(key, tail);
      void tail.then(() => {
        if (this.tails.get(key) === tail) this.tails.delete(key);
      });
      return run;
    });
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

const LWT_ATTEMPTS = 4;
const MAX_BATCH = 64;
/** Protocol error code of a write timeout (cassandra.types.responseErrorCodes.writeTimeout). */
const WRITE_TIMEOUT = 0x1100;

/** A Paxos round that timed out (contention or a slow replica): the write may or may not apply. */
export function isCasTimeout(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as { code?: unknown; writeType?: unknown };
  return e.code === WRITE_TIMEOUT && e.writeType === 'CAS';
}
