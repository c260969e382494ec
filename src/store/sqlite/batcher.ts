/**
 * Group commit for the SQLite driver.
 *
 * With `synchronous=FULL` every COMMIT is an fsync of the WAL, which costs far more than the
 * inserts it makes durable. So writes are not committed one by one: `run(op)` queues a
 * synchronous op and the batcher runs every op queued meanwhile in ONE transaction:
 *
 *     run(a) run(b) run(c)            (same tick: actors, HTTP callbacks)
 *          \    |    /
 *     BEGIN IMMEDIATE
 *       a(); b(); c()                 (the fast path: no op threw)
 *     COMMIT                          (one fsync)
 *     resolve(a) resolve(b) resolve(c) (only now: an acknowledged write is durable)
 *
 * When an op throws (a conflict, a fencing error: rare), the whole transaction is rolled back and
 * the batch runs again op by op, each in its own savepoint, so that only that op fails:
 *
 *     BEGIN IMMEDIATE
 *       SAVEPOINT op; a(); RELEASE op
 *       SAVEPOINT op; b(); -> throws -> ROLLBACK TO op; RELEASE op   (only b fails)
 *       SAVEPOINT op; c(); RELEASE op
 *     COMMIT
 *     resolve(a) reject(b) resolve(c)
 *
 * Savepoints are not free: every page an op changes is first copied to the statement journal
 * (measured: ~11% of a send's CPU), which is why the fast path runs without them. An op may
 * therefore run twice (first attempt undone by the rollback), so ops must have no effect outside
 * the database; every op of the SQLite driver only reads and writes its tables.
 *
 * When a batch is flushed: on `setImmediate` by default, i.e. after the event loop has handed
 * out everything that arrived (while the previous COMMIT blocked the loop in fsync, requests
 * pile up in the kernel and then land in one batch: the batch size adapts to the load with no
 * added latency when idle); after `maxDelayMs` when set (a fixed window, trading latency for
 * bigger batches); and at once when `maxOps` ops are queued.
 *
 * `minIntervalMs` spaces the starts of commits instead: a batch whose first op comes at least
 * that long after the previous commit started is flushed on `setImmediate` as above (no delay
 * after a quiet moment), one that comes sooner waits for the rest of the interval. Under a
 * steady load the commits, and so the fsyncs, are then at most 1000 / minIntervalMs per second.
 * Small commits cost far more per op than large ones (a commit's fixed cost, fsync and WAL frames
 * and thread switches, is ~0.4-0.5 ms of CPU in this VM): at 2,900 sends/s on one core, 757
 * commits/s of ~4 sends each without spacing, 663 of 4.4 with 2 ms (docs/storage.md).
 *
 * Ops run in call order, so one caller's unawaited writes apply in the order issued. An op must
 * be synchronous and must not open or end transactions itself.
 *
 * If SQLite itself rolled the whole transaction back (disk full, I/O error, lock timeout), no op
 * of the batch is durable, so every op of the batch is rejected with that error.
 */
import type Database from 'better-sqlite3';
import { StoreClosedError } from '../errors.ts';

export interface BatcherOptions {
  /** Most ops per transaction; default 256. */
  maxOps?: number;
  /** 0 (default): flush on setImmediate. > 0: flush at most this many ms after the first op. */
  maxDelayMs?: number;
  /** 0 (default): no spacing. > 0: a commit starts at least this many ms after the previous one started (maxOps still flushes at once). */
  minIntervalMs?: number;
}

export interface BatcherStats {
  /** Transactions committed (or attempted): the figure group commit keeps below `ops`. */
  transactions: number;
  ops: number;
  failedOps: number;
  largestBatch: number;
  /** Batches run a second time op by op in savepoints, because an op threw on the fast path. */
  retriedBatches: number;
  /**
   * How long each transaction took, BEGIN to the end of COMMIT (the ops and the fsync): counts per
   * bucket of COMMIT_BUCKETS (not cumulative; the last slot counts those above every bound).
   */
  commitBuckets: number[];
  /** Sum of those durations, in seconds. */
  commitSeconds: number;
}

/** Upper bounds (seconds) of the transaction-duration buckets, as Prometheus `le` values. */
export const COMMIT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5] as const;

export function emptyBatcherStats(): BatcherStats {
  return { transactions: 0, ops: 0, failedOps: 0, largestBatch: 0, retriedBatches: 0, commitBuckets: new Array<number>(COMMIT_BUCKETS.length + 1).fill(0), commitSeconds: 0 };
}

interface Pending {
  op: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export class WriteBatcher {
  private queue: Pending[] = [];
  private scheduled: { kind: 'immediate'; handle: NodeJS.Immediate } | { kind: 'timeout'; handle: NodeJS.Timeout } | null = null;
  private closed = false;
  private readonly maxOps: number;
  private readonly maxDelayMs: number;
  private readonly minIntervalMs: number;
  /** performance.now() when the last commit started. */
  private lastStart = Number.NEGATIVE_INFINITY;
  private readonly begin: Database.Statement;
  private readonly commit: Database.Statement;
  private readonly rollback: Database.Statement;
  private readonly savepoint: Database.Statement;
  private readonly release: Database.Statement;
  private readonly rollbackTo: Database.Statement;
  readonly stats: BatcherStats = emptyBatcherStats();

  constructor(
    private readonly db: Database.Database,
    options: BatcherOptions = {},
  ) {
    this.maxOps = options.maxOps ?? 256;
    this.maxDelayMs = options.maxDelayMs ?? 0;
    this.minIntervalMs = options.minIntervalMs ?? 0;
    if (!Number.isInteger(this.maxOps) || this.maxOps < 1) throw new RangeError('groupCommit.maxOps must be a positive integer');
    if (!(this.maxDelayMs >= 0 && this.maxDelayMs <= 1000)) throw new RangeError('groupCommit.maxDelayMs must be from 0 to 1000');
    if (!(this.minIntervalMs >= 0 && this.minIntervalMs <= 1000)) throw new RangeError('groupCommit.minIntervalMs must be from 0 to 1000');
    // IMMEDIATE takes the write lock up front: a deferred transaction that later upgrades from
    // read to write can fail with SQLITE_BUSY without waiting when another process writes.
    this.begin = db.prepare('BEGIN IMMEDIATE');
    this.commit = db.prepare('COMMIT');
    this.rollback = db.prepare('ROLLBACK');
    this.savepoint = db.prepare('SAVEPOINT op');
    this.release = db.prepare('RELEASE op');
    this.rollbackTo = db.prepare('ROLLBACK TO op');
  }

  /** Queues `op`; resolves with its result once the transaction that ran it has committed. */
  run<T>(op: () => T): Promise<T> {
    if (this.closed) return Promise.reject(new StoreClosedError());
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ op, resolve: resolve as (value: unknown) => void, reject });
      if (this.queue.length >= this.maxOps) this.flush();
      else if (this.scheduled === null) this.schedule();
    });
  }

  private schedule(): void {
    let wait = this.maxDelayMs;
    if (wait === 0 && this.minIntervalMs > 0) wait = this.minIntervalMs - (performance.now() - this.lastStart);
    // setTimeout's clock has 1 ms steps: a wait under half of one is not worth a timer.
    this.scheduled = wait >= 0.5 ? { kind: 'timeout', handle: setTimeout(() => this.flush(), wait) } : { kind: 'immediate', handle: setImmediate(() => this.flush()) };
  }

  /** Ops queued for the next transaction. */
  get queued(): number {
    return this.queue.length;
  }

  /** Commits everything queued now (synchronously). */
  flush(): void {
    if (this.scheduled !== null) {
      if (this.scheduled.kind === 'timeout') clearTimeout(this.scheduled.handle);
      else clearImmediate(this.scheduled.handle);
      this.scheduled = null;
    }
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxOps);
      this.commitBatch(batch);
    }
  }

  /** Commits what is queued and refuses further ops. */
  close(): void {
    this.flush();
    this.closed = true;
  }

  private commitBatch(batch: Pending[]): void {
    this.stats.transactions += 1;
    this.stats.ops += batch.length;
    this.stats.largestBatch = Math.max(this.stats.largestBatch, batch.length);
    const outcomes: Outcome[] = [];
    const started = performance.now();
    this.lastStart = started;
    try {
      this.begin.run();
      if (!this.runFast(batch, outcomes)) {
        // An op threw: undo everything, then run the batch again with one savepoint per op.
        this.rollback.run();
        this.stats.retriedBatches += 1;
        outcomes.length = 0;
        this.begin.run();
        for (const pending of batch) outcomes.push(this.runOp(pending.op));
      }
      this.commit.run();
    } catch (error) {
      // BEGIN or COMMIT failed, or SQLite aborted the transaction under an op: nothing of this
      // batch is durable, so nothing may be acknowledged.
      if (this.db.inTransaction) this.rollback.run();
      this.timed(started);
      this.stats.failedOps += batch.length;
      for (const pending of batch) pending.reject(error);
      return;
    }
    this.timed(started);
    batch.forEach((pending, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) pending.resolve(outcome.value);
      else {
        this.stats.failedOps += 1;
        pending.reject(outcome.error);
      }
    });
  }

  private timed(started: number): void {
    const seconds = (performance.now() - started) / 1000;
    this.stats.commitSeconds += seconds;
    let i = 0;
    while (i < COMMIT_BUCKETS.length && seconds > COMMIT_BUCKETS[i]!) i += 1;
    this.stats.commitBuckets[i]! += 1;
  }

  /**
   * Every op of the batch without savepoints. False when one threw and the transaction is still
   * open (the caller rolls back and retries carefully); a throw that ended the transaction
   * (SQLite aborted it) is rethrown: nothing of the batch can be kept.
   */
  private runFast(batch: Pending[], outcomes: Outcome[]): boolean {
    for (const pending of batch) {
      try {
        outcomes.push({ ok: true, value: pending.op() });
      } catch (error) {
        if (!this.db.inTransaction) throw error;
        return false;
      }
    }
    return true;
  }

  /** One op in its own savepoint: a throw undoes the op only. Rethrows if the transaction died. */
  private runOp(op: () => unknown): Outcome {
    this.savepoint.run();
    try {
      const value = op();
      this.release.run();
      return { ok: true, value };
    } catch (error) {
      if (!this.db.inTransaction) throw error;
      this.rollbackTo.run();
      this.release.run();
      return { ok: false, error };
    }
  }
}
