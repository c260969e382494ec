/**
 * One `consume` call of the Redis work queue (redis-work-queue.ts): one lane per job shard
 * (redis-job-lane.ts: a read loop on a connection of its own), up to `concurrency` handlers
 * across them, heartbeats for the jobs it holds.
 *
 *   lane k: [claim idle jobs of dead consumers of shard k, every claimIdleMs/2]
 *           promote shard k's due delayed jobs + XREADGROUP BLOCK   (one round trip)
 *           hand the jobs here; wait while no slot is free
 *
 * Lanes read at once, each for the slots free when it started its read, so a burst on several
 * shards can bring more jobs than free slots: the extra ones wait here, pending in their group
 * and kept fresh by heartbeats like running ones, and start as slots free (before any new read).
 * The slot of a job frees when its handler settles; stop() also waits for its ack or retry.
 */
import type { RedisClient } from '../redis/client.ts';
import type { JobHandler } from './types.ts';
import { Lane } from './redis-job-lane.ts';
import type { Delivery, RedisWorkQueue, Shard, StreamEntry } from './redis-work-queue.ts';

export class RedisConsumer<J> {
  /** Jobs whose handler runs, by `<shard>/<entry id>` (entry ids repeat across streams). */
  private readonly running = new Map<string, Delivery<J>>();
  /** Jobs read beyond the free slots, in arrival order. */
  private readonly waiting: Delivery<J>[] = [];
  /** Acks and retries still on their way to Redis: stop() waits for them too. */
  private readonly settling = new Set<Promise<void>>();
  private readonly idle: Array<() => void> = [];
  private readonly lanes: Lane<J>[];
  private readonly heartbeat: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly q: RedisWorkQueue<J>,
    conns: ReadonlyArray<{ shard: Shard; conn: RedisClient }>,
    private readonly name: string,
    private readonly handler: JobHandler<J>,
    private readonly concurrency: number,
  ) {
    this.heartbeat = setInterval(() => this.beat(), Math.max(1, Math.floor(q.o.claimIdleMs / 3)));
    this.heartbeat.unref();
    this.lanes = conns.map(({ shard, conn }) => new Lane<J>(q, this, shard, conn, name));
  }

  /** Slots a lane may read for now. */
  free(): number {
    return this.concurrency - this.running.size - this.waiting.length;
  }

  /**
   * Stops reading; resolves when running and waiting jobs (and their acks or retries) finished.
   * Jobs a read in flight brings back were taken before the stop: they run, and are waited for.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.lanes.map((lane) => lane.halt()));
    if (!this.isIdle()) await new Promise<void>((resolve) => this.idle.push(resolve));
    await Promise.all(this.lanes.map((lane) => lane.forget()));
    this.kill();
  }

  /** The bus closed: stop at once, leaving held jobs pending for another node to claim. */
  kill(): void {
    this.stopped = true;
    clearInterval(this.heartbeat);
    for (const lane of this.lanes) lane.kill();
  }

  /** A retry of this consumer's queue is due on `shard` at `due`: its lane reads by then. */
  wakeBy(shard: Shard, due: number): void {
    this.lanes[shard.index]?.wakeBy(due);
  }

  /** Starts the delivered jobs, or queues them past the free slots; answers whether there were any. */
  take(shard: Shard, entries: StreamEntry[]): boolean {
    let any = false;
    for (const entry of entries) {
      const d = this.q.decode(shard, entry);
      if (!d) {
        if (entry) this.settle(this.q.ack(shard, entry[0])); // unreadable, or deleted while pending: drop it
        continue;
      }
      any = true;
      if (this.running.size < this.concurrency) this.run(d);
      else this.waiting.push(d);
    }
    return any;
  }

  private run(d: Delivery<J>): void {
    this.running.set(`${d.shard.index}/${d.entryId}`, d);
    let outcome: Promise<void>;
    try {
      outcome = Promise.resolve(this.handler(d.job, { attempt: d.attempt }));
    } catch (error) {
      outcome = Promise.reject(error); // a handler that throws synchronously fails like one that rejects
    }
    // The slot frees when the handler settles; the ack or retry is awaited by stop() only.
    this.settle(
      outcome.then(
        () => {
          this.release(d);
          return this.q.ack(d.shard, d.entryId);
        },
        (error: unknown) => {
          this.release(d);
          return this.q.failed(d, error);
        },
      ),
    );
  }

  private release(d: Delivery<J>): void {
    this.running.delete(`${d.shard.index}/${d.entryId}`);
    const next = this.waiting.shift();
    if (next) this.run(next);
    else if (!this.stopped) for (const lane of this.lanes) lane.capacity();
  }

  /** Resets the idle time of every held job (running or waiting), per shard. */
  private beat(): void {
    const byShard = new Map<Shard, string[]>();
    for (const d of [...this.running.values(), ...this.waiting]) {
      const ids = byShard.get(d.shard) ?? [];
      ids.push(d.entryId);
      byShard.set(d.shard, ids);
    }
    for (const [shard, ids] of byShard) this.q.heartbeat(shard, this.name, ids);
  }

  private isIdle(): boolean {
    return this.running.size === 0 && this.waiting.length === 0 && this.settling.size === 0;
  }

  private settle(work: Promise<unknown>): void {
    // Redis unreachable: the job stays pending and is claimed again after claimIdleMs.
    const p = work.then(
      () => undefined,
      () => undefined,
    );
    this.settling.add(p);
    void p.then(() => {
      this.settling.delete(p);
      if (this.isIdle()) for (const resolve of this.idle.splice(0)) resolve();
    });
  }
}
