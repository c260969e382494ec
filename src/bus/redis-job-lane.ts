/**
 * One shard's read loop of a Redis work-queue consumer (redis-job-consumer.ts), on a connection
 * of its own:
 *
 *   loop: [claim idle jobs of dead consumers, every claimIdleMs/2]
 *         promote due delayed jobs + XREADGROUP BLOCK   (one round trip, same connection)
 *         hand the jobs to the consumer; wait while it has no free slot
 *
 * A local timer cuts a blocked read short with CLIENT UNBLOCK (Redis times blocked reads out
 * only at its cron's pace, 100 ms) when a delayed job is due, a claim scan is due, this node
 * scheduled a retry, or the consumer stops. The connection's id comes from the node the read
 * blocks on (on a Cluster, the master of the shard's slot) and UNBLOCK goes to that node.
 */
import { nodeOf, type RedisClient } from '../redis/client.ts';
import type { RedisConsumer } from './redis-job-consumer.ts';
import type { RedisWorkQueue, Shard, StreamEntry } from './redis-work-queue.ts';

export class Lane<J> {
  private stopped = false;
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
  private readonly looping: Promise<void>;

  constructor(
    private readonly q: RedisWorkQueue<J>,
    private readonly consumer: RedisConsumer<J>,
    private readonly shard: Shard,
    private readonly conn: RedisClient,
    private readonly name: string,
  ) {
    conn.on('error', () => undefined); // ioredis reconnects; the loop retries
    // An auto-pipeline answers its commands only once all of them are answered, so the promote
    // sent with a blocking read would answer after the read: this connection sends each command
    // as it is called (order is kept either way).
    conn.options.enableAutoPipelining = false;
    this.looping = this.loop();
  }

  /** Stops reading (cutting a blocked read short); resolves when the loop is over. */
  halt(): Promise<void> {
    if (!this.stopped) {
      this.stopped = true;
      this.wake?.();
      this.kick();
    }
    return this.looping;
  }

  /** Removes this consumer from the shard's group (it holds nothing any more). */
  forget(): Promise<void> {
    return this.q.forgetConsumers(this.conn, this.shard, this.name).then(
      () => undefined,
      () => undefined,
    );
  }

  kill(): void {
    void this.halt();
    this.conn.disconnect();
  }

  /** A slot freed: a loop waiting for one reads again. */
  capacity(): void {
    this.wake?.();
  }

  /** Cuts the read in flight short at `due` (a job due then), if it would block longer. */
  wakeBy(due: number): void {
    if (this.reading && due < this.wakeAt) this.wakeReadAt(due);
  }

  private async loop(): Promise<void> {
    const claimEvery = Math.max(1, Math.floor(this.q.o.claimIdleMs / 2));
    let failures = 0;
    while (!this.stopped) {
      const free = this.consumer.free();
      if (free <= 0) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = null;
        continue;
      }
      try {
        if (Date.now() >= this.nextClaimAt) {
          this.nextClaimAt = Date.now() + claimEvery;
          if (this.consumer.take(this.shard, await this.claim(free)) || this.stopped) continue;
          if (this.claimCursor === '0-0') await this.q.forgetConsumers(this.conn, this.shard, '');
        }
        // One round trip: promote due jobs, learn the connection's id, read. The read blocks
        // until jobs come, the next reclaim scan, or the next delayed job is due.
        this.reading = true;
        this.reads += 1;
        this.wakeReadAt(this.nextClaimAt);
        void this.q.promote(this.conn, this.shard).then(
          (nextDue) => nextDue >= 0 && this.wakeBy(Date.now() + nextDue),
          () => undefined,
        );
        this.clientId = null;
        const node = nodeOf(this.conn, this.shard.stream);
        void node?.client('ID').then(
          (id) => (this.clientId = Number(id)),
          () => undefined,
        );
        const entries = await this.q.read(this.conn, this.shard, this.name, free);
        this.readDone();
        this.consumer.take(this.shard, entries);
        failures = 0;
      } catch (error) {
        this.readDone();
        if (this.stopped) break;
        if (String(error).includes('NOGROUP')) {
          await this.q.ensureGroup(this.conn, this.shard).catch(() => undefined);
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
   * Ends the read in flight with CLIENT UNBLOCK. The UNBLOCK may overtake a read still on its way
   * to the server: it is repeated until a read was unblocked or none is in flight.
   */
  private kick(): void {
    const read = this.reads;
    const attempt = (): void => {
      if (!this.reading || this.reads !== read) return;
      if (this.clientId === null) {
        setTimeout(attempt, 5);
        return;
      }
      this.q.unblock(this.shard, this.clientId).then(
        (unblocked) => unblocked !== 1 && setTimeout(attempt, 5),
        () => undefined,
      );
    };
    attempt();
  }

  /** Claims jobs idle past claimIdleMs in any consumer's pending list (a dead node's). */
  private async claim(count: number): Promise<StreamEntry[]> {
    const [cursor, entries] = await this.q.claim(this.conn, this.shard, this.name, count, this.claimCursor);
    this.claimCursor = cursor;
    return entries;
  }
}
