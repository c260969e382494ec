/**
 * One `consume` call of the Redis work queue (redis-work-queue.ts): a read loop on a connection
 * of its own, up to `concurrency` handlers, heartbeats for the running jobs.
 *
 *   loop: [claim idle jobs of dead consumers, every claimIdleMs/2]
 *         promote due delayed jobs + XREADGROUP BLOCK   (one round trip, same connection)
 *         start each job; wait for a free slot
 *
 * The slot of a job frees when its handler settles; stop() also waits for its ack or retry.
 */
import type { Redis } from 'ioredis';
import type { JobHandler } from './types.ts';
import type { Delivery, RedisWorkQueue, StreamEntry } from './redis-work-queue.ts';

/** One `consume` call: a read loop on its own connection and up to `concurrency` handlers. */
export class RedisConsumer<J> {
  /** Jobs whose handler runs: they count against the concurrency and get heartbeats. */
  private readonly running = new Map<string, Delivery<J>>();
  /** Acks and retries still on their way to Redis: stop() waits for them too. */
  private readonly settling = new Set<Promise<void>>();
  private stopped = false;
  private readonly idle: Array<() => void> = [];
  /** Wakes the loop when it waits for capacity or backs off after an error. */
  private wake: (() => void) | null = null;
  private clientId: number | null = null;
  /** A read is in flight (blocking, or on its way to the server). */
  private reading = false;
  /** When the read in flight must be cut short (a due job, a reclaim scan), and its timer. */
  private wakeAt = Infinity;
  private wakeTimer: NodeJS.Timeout | null = null;
  /** Counts reads, so a kick aimed at one read stops when it is over. */
  private reads = 0;
  private claimCursor = '0-0';
  private nextClaimAt = 0;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly looping: Promise<void>;

  constructor(
    private readonly q: RedisWorkQueue<J>,
    private readonly conn: Redis,
    private readonly name: string,
    private readonly handler: JobHandler<J>,
    private readonly concurrency: number,
  ) {
    conn.on('error', () => undefined); // ioredis reconnects; the loop retries
    // An auto-pipeline answers its commands only once all of them are answered, so the promote
    // sent with a blocking read would answer after the read: this connection sends each command
    // as it is called (order is kept either way).
    conn.options.enableAutoPipelining = false;
    this.heartbeat = setInterval(() => {
      if (this.running.size > 0) q.heartbeat(name, [...this.running.keys()]);
    }, Math.max(1, Math.floor(q.o.claimIdleMs / 3)));
    this.heartbeat.unref();
    this.looping = this.loop();
  }

  /**
   * Stops reading; resolves when running handlers (and their acks or retries) finished. Jobs a
   * read in flight brings back were taken before the stop: they run, and are waited for too.
   */
  async stop(): Promise<void> {
    this.halt();
    await this.looping;
    if (!this.isIdle()) await new Promise<void>((resolve) => this.idle.push(resolve));
    await this.q.forgetConsumers(this.conn, this.name).catch(() => undefined);
    this.kill();
  }

  /** The bus closed: stop at once, leaving running jobs pending for another node to claim. */
  kill(): void {
    this.halt();
    clearInterval(this.heartbeat);
    this.conn.disconnect();
  }

  /** Cuts the read in flight short at `due` (a job due then), if it would block longer. */
  wakeBy(due: number): void {
    if (this.reading && due < this.wakeAt) this.wakeReadAt(due);
  }

  private halt(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.wake?.();
    this.kick();
  }

  private isIdle(): boolean {
    return this.running.size === 0 && this.settling.size === 0;
  }

  private async loop(): Promise<void> {
    const claimEvery = Math.max(1, Math.floor(this.q.o.claimIdleMs / 2));
    let failures = 0;
    while (!this.stopped) {
      const free = this.concurrency - this.running.size;
      if (free <= 0) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = null;
        continue;
      }
      try {
        if (Date.now() >= this.nextClaimAt) {
          this.nextClaimAt = Date.now() + claimEvery;
          if (this.take(await this.claim(free)) || this.stopped) continue;
          if (this.claimCursor === '0-0') await this.q.forgetConsumers(this.conn, '');
        }
        // One round trip: promote due jobs, learn the connection's id, read. The read blocks
        // until jobs come, the next reclaim scan, or the next delayed job is due.
        this.reading = true;
        this.reads += 1;
        this.wakeReadAt(this.nextClaimAt);
        void this.q.promote(this.conn).then(
          (nextDue) => nextDue >= 0 && this.wakeBy(Date.now() + nextDue),
          () => undefined,
        );
        void this.conn.client('ID').then(
          (id) => (this.clientId = Number(id)),
          () => undefined,
        );
        const entries = await this.q.read(this.conn, this.name, free);
        this.readDone();
        this.take(entries);
        failures = 0;
      } catch (error) {
        this.readDone();
        if (this.stopped) break;
        if (String(error).includes('NOGROUP')) {
          await this.q.ensureGroup(this.conn).catch(() => undefined);
          continue;
        }
        failures += 1;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(1000, 25 * 2 ** failures));
          this.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wake = null;
      }
    }
  }

  private wakeReadAt(at: number): void {
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeAt = at;
    this.wakeTimer = setTimeout(() => this.kick(), Math.max(0, at - Date.now()));
  }

  private readDone(): void {
    this.reading = false;
    this.wakeAt = Infinity;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeTimer = null;
  }

  /**
   * Ends the read in flight with CLIENT UNBLOCK (Redis times blocked reads out only at its cron's
   * pace, 100 ms, so short waits are timed here). The UNBLOCK may overtake a read still on its
   * way to the server: it is repeated until a read was unblocked or none is in flight.
   */
  private kick(): void {
    const read = this.reads;
    const attempt = (): void => {
      if (!this.reading || this.reads !== read) return;
      if (this.clientId === null) {
        setTimeout(attempt, 5);
        return;
      }
      this.q.unblock(this.clientId).then(
        (unblocked) => unblocked !== 1 && setTimeout(attempt, 5),
        () => undefined,
      );
    };
    attempt();
  }

  /** Claims jobs idle past claimIdleMs in any consumer's pending list (a dead node's). */
  private async claim(count: number): Promise<StreamEntry[]> {
    const [cursor, entries] = await this.q.claim(this.conn, this.name, count, this.claimCursor);
    this.claimCursor = cursor;
    return entries;
  }

  /** Starts the delivered jobs; answers whether there were any. */
  private take(entries: StreamEntry[]): boolean {
    let any = false;
    for (const entry of entries) {
      const d = this.q.decode(entry);
      if (!d) {
        if (entry) this.settle(this.q.ack(entry[0])); // unreadable, or deleted while pending: drop it
        continue;
      }
      any = true;
      this.run(d);
    }
    return any;
  }

  private run(d: Delivery<J>): void {
    this.running.set(d.entryId, d);
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
          return this.q.ack(d.entryId);
        },
        (error: unknown) => {
          this.release(d);
          return this.q.failed(d, error);
        },
      ),
    );
  }

  private release(d: Delivery<J>): void {
    this.running.delete(d.entryId);
    this.wake?.();
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
