/**
 * The work queue on Redis: one stream of jobs read by one consumer group, and a sorted set of
 * jobs waiting for a retry.
 *
 *   enqueue ─enqueue.lua─> {jobs}:s ──XREADGROUP >──> consumer (own connection, BLOCK)
 *                            ▲   ▲                      │ handler resolved ─ack.lua─> XACK+XDEL
 *        promote.lua (due) ──┘   └─ XAUTOCLAIM idle     │ handler rejected ─retry.lua─> {jobs}:delayed
 *                                   > claimIdleMs       │   (or ack + onGiveUp when the policy gives up)
 *                                                       └ XCLAIM JUSTID every claimIdleMs/3 while
 *                                                         running: a live node's jobs stay fresh
 *
 * At-least-once: a job leaves the stream only when a handler resolved or the policy gave up. A
 * job whose consumer died (no ack, no heartbeat) is idle in the group's pending list and is
 * claimed by any consumer after `claimIdleMs`; it runs again with the same attempt number (it
 * never failed, it was interrupted). A slow node whose job was claimed meanwhile may finish it
 * too: two runs, never zero.
 *
 * Each consumer (redis-job-consumer.ts) blocks on its own connection; delayed jobs are moved
 * back by whichever consumer reads next, and a read never blocks past the next due job, the next
 * reclaim scan, or a retry this node scheduled (a local timer cuts it short with CLIENT UNBLOCK;
 * `blockMs` is only the server-side cap). Stopping a consumer cuts its read the same way, and
 * removes it from the group; consumers of dead nodes are removed once idle for ten claim
 * periods with nothing pending (lua/forget-consumers.lua).
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { defineScript } from '../redis/scripts.ts';
import { RedisConsumer } from './redis-job-consumer.ts';
import { BusClosedError, QueueFullError, type ConsumeOptions, type JobHandler, type RetryPolicy } from './types.ts';

export interface RedisWorkQueueOptions {
  /** Connection for enqueue, acks, retries, heartbeats (shared with the event streams). */
  redis: Redis;
  /** Opens a connection of a consumer's own, for its blocking reads. */
  open: (name: string) => Redis;
  keyPrefix: string;
  nodeId: string;
  maxQueued: number;
  retry: RetryPolicy;
  onGiveUp: (job: unknown, error: unknown) => void;
  claimIdleMs: number;
  /** Longest a read blocks; it is cut short whenever work may be due sooner. */
  blockMs: number;
}

export interface Delivery<J> {
  entryId: string;
  json: string;
  job: J;
  attempt: number;
}

interface QueueScripts {
  busEnqueue(stream: string, delayed: string, job: string, max: string, group: string): Promise<number>;
  busAck(stream: string, group: string, entryId: string): Promise<number>;
  busRetry(stream: string, delayed: string, group: string, entryId: string, delayMs: string, attempt: string, job: string): Promise<number>;
  busPromote(stream: string, delayed: string, limit: string): Promise<number>;
  busForgetConsumers(stream: string, group: string, consumer: string, idleMs: string): Promise<number>;
}

type Scripted = Redis & QueueScripts;
/** An entry as XREADGROUP and XAUTOCLAIM answer it; null for one deleted while pending (6.2). */
export type StreamEntry = [string, string[]] | null;

const GROUP = 'workers';
/** Most delayed jobs one promotion moves. */
const PROMOTE_BATCH = 100;
/** A consumer idle this many claim periods with nothing pending is removed from the group. */
const FORGET_AFTER_CLAIM_PERIODS = 10;

function define(redis: Redis): Scripted {
  defineScript(redis, 'busEnqueue', 'bus/lua/enqueue.lua', 2);
  defineScript(redis, 'busAck', 'bus/lua/ack.lua', 1);
  defineScript(redis, 'busRetry', 'bus/lua/retry.lua', 2);
  defineScript(redis, 'busPromote', 'bus/lua/promote.lua', 2);
  defineScript(redis, 'busForgetConsumers', 'bus/lua/forget-consumers.lua', 1);
  return redis as Scripted;
}

export class RedisWorkQueue<J> {
  readonly stream: string;
  readonly delayed: string;
  private readonly redis: Scripted;
  private readonly consumers = new Set<RedisConsumer<J>>();
  private closed = false;

  constructor(readonly o: RedisWorkQueueOptions) {
    this.redis = define(o.redis);
    this.stream = `${o.keyPrefix}bus:{jobs}:s`;
    this.delayed = `${o.keyPrefix}bus:{jobs}:delayed`;
  }

  enqueue(job: J): Promise<void> {
    if (this.closed) return Promise.reject(new BusClosedError());
    const json = JSON.stringify(job);
    if (json === undefined) return Promise.reject(new TypeError('jobs must be JSON values'));
    return this.redis.busEnqueue(this.stream, this.delayed, json, String(this.o.maxQueued), GROUP).then((queued) => {
      if (queued !== 1) throw new QueueFullError(this.o.maxQueued);
    });
  }

  consume(handler: JobHandler<J>, options: ConsumeOptions = {}): () => Promise<void> {
    const concurrency = options.concurrency ?? 1;
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError('concurrency must be a positive integer');
    if (this.closed) throw new BusClosedError();
    const name = `${this.o.nodeId}:${randomUUID().slice(0, 8)}`;
    const consumer = new RedisConsumer<J>(this, define(this.o.open(`${name}:jobs`)), name, handler, concurrency);
    this.consumers.add(consumer);
    return () => {
      this.consumers.delete(consumer);
      return consumer.stop();
    };
  }

  /** Stops every consumer without waiting for running handlers (their jobs stay pending). */
  close(): void {
    this.closed = true;
    for (const consumer of this.consumers) consumer.kill();
    this.consumers.clear();
  }

  ensureGroup(redis: Redis): Promise<void> {
    return redis.xgroup('CREATE', this.stream, GROUP, '0', 'MKSTREAM').then(
      () => undefined,
      (error: unknown) => {
        if (!String(error).includes('BUSYGROUP')) throw error;
      },
    );
  }

  ack(entryId: string): Promise<number> {
    return this.redis.busAck(this.stream, GROUP, entryId);
  }

  /** Puts a job back, after `delayMs`, for delivery number `attempt`; answers -1 if it was no longer pending. */
  requeue(d: Delivery<J>, delayMs: number, attempt: number): Promise<number> {
    return this.redis.busRetry(this.stream, this.delayed, GROUP, d.entryId, String(Math.max(0, Math.ceil(delayMs))), String(attempt), d.json);
  }

  /** After a rejected handler: retry per the policy, or give up. */
  async failed(d: Delivery<J>, error: unknown): Promise<void> {
    const delay = this.o.retry(d.attempt, error);
    if (delay === null) {
      if ((await this.ack(d.entryId)) !== 1) return; // another consumer had claimed and finished it
      try {
        this.o.onGiveUp(d.job, error);
      } catch {
        // the hook's own failure has nowhere to go
      }
      return;
    }
    const scheduled = await this.requeue(d, delay, d.attempt + 1);
    if (scheduled < 0) return;
    const due = Date.now() + scheduled;
    for (const consumer of this.consumers) consumer.wakeBy(due);
  }

  /** Moves due delayed jobs into the stream; answers ms until the next is due, or -1. */
  promote(conn: Redis): Promise<number> {
    return (conn as Scripted).busPromote(this.stream, this.delayed, String(PROMOTE_BATCH));
  }

  /** Reads new jobs for `consumer`, blocking up to blockMs. */
  async read(conn: Redis, consumer: string, count: number): Promise<StreamEntry[]> {
    const reply = (await conn.xreadgroup('GROUP', GROUP, consumer, 'COUNT', count, 'BLOCK', this.o.blockMs, 'STREAMS', this.stream, '>')) as Array<
      [string, StreamEntry[]]
    > | null;
    return reply?.[0]?.[1] ?? [];
  }

  /** Claims for `consumer` jobs pending longer than claimIdleMs; answers the next cursor and them. */
  async claim(conn: Redis, consumer: string, count: number, cursor: string): Promise<[string, StreamEntry[]]> {
    const reply = (await conn.xautoclaim(this.stream, GROUP, consumer, this.o.claimIdleMs, cursor, 'COUNT', count)) as unknown as [string, StreamEntry[], ...unknown[]];
    return [reply[0], reply[1]];
  }

  /** Removes `consumer` (or '') and long-idle consumers without pending jobs from the group. */
  forgetConsumers(conn: Redis, consumer: string): Promise<number> {
    return (conn as Scripted).busForgetConsumers(this.stream, GROUP, consumer, String(this.o.claimIdleMs * FORGET_AFTER_CLAIM_PERIODS));
  }

  heartbeat(consumer: string, entryIds: string[]): void {
    // Resets the idle time of this consumer's running jobs, so no other node claims them.
    this.redis.xclaim(this.stream, GROUP, consumer, 0, ...entryIds, 'JUSTID').catch(() => undefined);
  }

  /** Answers 1 if the client was blocked and is no longer. */
  unblock(clientId: number): Promise<number> {
    return this.redis.client('UNBLOCK', clientId) as Promise<number>;
  }

  decode(entry: StreamEntry): Delivery<J> | null {
    if (!entry || !Array.isArray(entry[1])) return null;
    const [entryId, fields] = entry;
    const json = fields[fields.indexOf('j') + 1];
    const attempt = Number(fields[fields.indexOf('a') + 1]);
    if (json === undefined || !Number.isSafeInteger(attempt)) return null;
    try {
      return { entryId, json, job: JSON.parse(json) as J, attempt };
    } catch {
      return null; // not written by this driver
    }
  }
}
