/**
 * The work queue on Redis: streams of jobs read by one consumer group each, and per stream a
 * sorted set of jobs waiting for a retry. One stream (`{jobs}`) on a single Redis; on a Redis
 * Cluster the queue is sharded over `shards` streams (`{jobs:0}` ... `{jobs:N-1}`, each with its
 * own delayed set in its slot), so the job traffic spreads over the masters instead of one key.
 *
 *   enqueue ─enqueue.lua─> {jobs:k}:s (k round robin) ──XREADGROUP >──> every consumer has one
 *                            ▲   ▲                                       lane per shard (own
 *        promote.lua (due) ──┘   └─ XAUTOCLAIM idle > claimIdleMs        connection, BLOCK)
 *                                                      │ handler resolved ─ack.lua─> XACK+XDEL
 *                                                      │ handler rejected ─retry.lua─> {jobs:k}:delayed
 *                                                      │   (or ack + onGiveUp when the policy gives up)
 *                                                      └ XCLAIM JUSTID every claimIdleMs/3 while held:
 *                                                        a live node's jobs stay fresh
 *
 * At-least-once: a job leaves its stream only when a handler resolved or the policy gave up. A
 * job whose consumer died (no ack, no heartbeat) is idle in the group's pending list and is
 * claimed by any consumer's lane of that shard after `claimIdleMs`; it runs again with the same
 * attempt number (it never failed, it was interrupted). A slow node whose job was claimed
 * meanwhile may finish it too: two runs, never zero.
 *
 * Each lane (redis-job-lane.ts) blocks on its own connection; delayed jobs are moved back by
 * whichever lane of their shard reads next, and a read never blocks past the next due job, the
 * next reclaim scan, or a retry this node scheduled (a local timer cuts it short with CLIENT
 * UNBLOCK, sent to the node the read blocks on; `blockMs` is only the server-side cap).
 * Stopping a consumer cuts its reads the same way, and removes it from every shard's group;
 * consumers of dead nodes are removed once idle for ten claim periods with nothing pending
 * (lua/forget-consumers.lua).
 *
 * The bound `maxQueued` is kept per shard (a share of it each): enqueues go round robin, so the
 * shards fill evenly and the total stays within a shard's share of the bound.
 */
import { randomUUID } from 'node:crypto';
import { nodeOf, type RedisClient } from '../redis/client.ts';
import { defineScript } from '../redis/scripts.ts';
import { RedisConsumer } from './redis-job-consumer.ts';
import { BusClosedError, QueueFullError, type ConsumeOptions, type JobHandler, type RetryPolicy } from './types.ts';

export interface RedisWorkQueueOptions {
  /** Connection for enqueue, acks, retries, heartbeats (shared with the event streams). */
  redis: RedisClient;
  /** Opens a connection of a consumer lane's own, for its blocking reads. */
  open: (name: string) => RedisClient;
  keyPrefix: string;
  nodeId: string;
  maxQueued: number;
  /** Job streams: 1 on a single Redis; several spread the queue over a Redis Cluster's masters. */
  shards: number;
  retry: RetryPolicy;
  onGiveUp: (job: unknown, error: unknown) => void;
  claimIdleMs: number;
  /** Longest a read blocks; it is cut short whenever work may be due sooner. */
  blockMs: number;
}

/** One job stream with its delayed set: keys sharing a hash tag, so one slot. */
export interface Shard {
  index: number;
  stream: string;
  delayed: string;
}

export interface Delivery<J> {
  shard: Shard;
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

type Scripted = RedisClient & QueueScripts;
/** An entry as XREADGROUP and XAUTOCLAIM answer it; null for one deleted while pending (6.2). */
export type StreamEntry = [string, string[]] | null;

const GROUP = 'workers';
/** Most delayed jobs one promotion moves. */
const PROMOTE_BATCH = 100;
/** A consumer idle this many claim periods with nothing pending is removed from the group. */
const FORGET_AFTER_CLAIM_PERIODS = 10;

function define(redis: RedisClient): Scripted {
  defineScript(redis, 'busEnqueue', 'bus/lua/enqueue.lua', 2);
  defineScript(redis, 'busAck', 'bus/lua/ack.lua', 1);
  defineScript(redis, 'busRetry', 'bus/lua/retry.lua', 2);
  defineScript(redis, 'busPromote', 'bus/lua/promote.lua', 2);
  defineScript(redis, 'busForgetConsumers', 'bus/lua/forget-consumers.lua', 1);
  return redis as Scripted;
}

/** The keys of shard `index` of `count`: `{jobs}` alone keeps a single Redis's layout. */
export function jobShard(keyPrefix: string, index: number, count: number): Shard {
  const tag = count === 1 ? '{jobs}' : `{jobs:${index}}`;
  return { index, stream: `${keyPrefix}bus:${tag}:s`, delayed: `${keyPrefix}bus:${tag}:delayed` };
}

export class RedisWorkQueue<J> {
  readonly shards: readonly Shard[];
  private readonly redis: Scripted;
  private readonly consumers = new Set<RedisConsumer<J>>();
  /** Each shard's share of maxQueued. */
  private readonly perShard: string;
  private next: number;
  private closed = false;

  constructor(readonly o: RedisWorkQueueOptions) {
    this.redis = define(o.redis);
    this.shards = Array.from({ length: o.shards }, (_, i) => jobShard(o.keyPrefix, i, o.shards));
    this.perShard = String(Math.ceil(o.maxQueued / o.shards));
    this.next = Math.floor(Math.random() * o.shards);
  }

  enqueue(job: J): Promise<void> {
    if (this.closed) return Promise.reject(new BusClosedError());
    const json = JSON.stringify(job);
    if (json === undefined) return Promise.reject(new TypeError('jobs must be JSON values'));
    const shard = this.shards[this.next]!;
    this.next = (this.next + 1) % this.shards.length;
    return this.redis.busEnqueue(shard.stream, shard.delayed, json, this.perShard, GROUP).then((queued) => {
      if (queued !== 1) throw new QueueFullError(this.o.maxQueued);
    });
  }

  consume(handler: JobHandler<J>, options: ConsumeOptions = {}): () => Promise<void> {
    const concurrency = options.concurrency ?? 1;
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError('concurrency must be a positive integer');
    if (this.closed) throw new BusClosedError();
    const name = `${this.o.nodeId}:${randomUUID().slice(0, 8)}`;
    const lanes = this.shards.map((shard) => ({ shard, conn: define(this.o.open(this.shards.length === 1 ? `${name}:jobs` : `${name}:jobs:${shard.index}`)) }));
    const consumer = new RedisConsumer<J>(this, lanes, name, handler, concurrency);
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

  ensureGroup(redis: RedisClient, shard: Shard): Promise<void> {
    return redis.xgroup('CREATE', shard.stream, GROUP, '0', 'MKSTREAM').then(
      () => undefined,
      (error: unknown) => {
        if (!String(error).includes('BUSYGROUP')) throw error;
      },
    );
  }

  ack(shard: Shard, entryId: string): Promise<number> {
    return this.redis.busAck(shard.stream, GROUP, entryId);
  }

  /** Puts a job back, after `delayMs`, for delivery number `attempt`; answers -1 if it was no longer pending. */
  requeue(d: Delivery<J>, delayMs: number, attempt: number): Promise<number> {
    return this.redis.busRetry(d.shard.stream, d.shard.delayed, GROUP, d.entryId, String(Math.max(0, Math.ceil(delayMs))), String(attempt), d.json);
  }

  /** After a rejected handler: retry per the policy, or give up. */
  async failed(d: Delivery<J>, error: unknown): Promise<void> {
    const delay = this.o.retry(d.attempt, error);
    if (delay === null) {
      if ((await this.ack(d.shard, d.entryId)) !== 1) return; // another consumer had claimed and finished it
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
    for (const consumer of this.consumers) consumer.wakeBy(d.shard, due);
  }

  /** Moves due delayed jobs into the stream; answers ms until the next is due, or -1. */
  promote(conn: RedisClient, shard: Shard): Promise<number> {
    return (conn as Scripted).busPromote(shard.stream, shard.delayed, String(PROMOTE_BATCH));
  }

  /** Reads new jobs for `consumer`, blocking up to blockMs. */
  async read(conn: RedisClient, shard: Shard, consumer: string, count: number): Promise<StreamEntry[]> {
    const reply = (await conn.xreadgroup('GROUP', GROUP, consumer, 'COUNT', count, 'BLOCK', this.o.blockMs, 'STREAMS', shard.stream, '>')) as Array<
      [string, StreamEntry[]]
    > | null;
    return reply?.[0]?.[1] ?? [];
  }

  /** Claims for `consumer` jobs pending longer than claimIdleMs; answers the next cursor and them. */
  async claim(conn: RedisClient, shard: Shard, consumer: string, count: number, cursor: string): Promise<[string, StreamEntry[]]> {
    const reply = (await conn.xautoclaim(shard.stream, GROUP, consumer, this.o.claimIdleMs, cursor, 'COUNT', count)) as unknown as [string, StreamEntry[], ...unknown[]];
    return [reply[0], reply[1]];
  }

  /** Removes `consumer` (or '') and long-idle consumers without pending jobs from the shard's group. */
  forgetConsumers(conn: RedisClient, shard: Shard, consumer: string): Promise<number> {
    return (conn as Scripted).busForgetConsumers(shard.stream, GROUP, consumer, String(this.o.claimIdleMs * FORGET_AFTER_CLAIM_PERIODS));
  }

  heartbeat(shard: Shard, consumer: string, entryIds: string[]): void {
    // Resets the idle time of this consumer's held jobs, so no other node claims them.
    this.redis.xclaim(shard.stream, GROUP, consumer, 0, ...entryIds, 'JUSTID').catch(() => undefined);
  }

  /**
   * Ends the blocked read of connection `clientId` on the node serving `shard`; answers 1 if the
   * client was blocked and is no longer. On a Cluster the command goes to that node (CLIENT
   * commands carry no key to route by).
   */
  unblock(shard: Shard, clientId: number): Promise<number> {
    const node = nodeOf(this.redis, shard.stream);
    if (!node) return Promise.resolve(0);
    return node.client('UNBLOCK', clientId) as Promise<number>;
  }

  decode(shard: Shard, entry: StreamEntry): Delivery<J> | null {
    if (!entry || !Array.isArray(entry[1])) return null;
    const [entryId, fields] = entry;
    const json = fields[fields.indexOf('j') + 1];
    const attempt = Number(fields[fields.indexOf('a') + 1]);
    if (json === undefined || !Number.isSafeInteger(attempt)) return null;
    try {
      return { shard, entryId, json, job: JSON.parse(json) as J, attempt };
    } catch {
      return null; // not written by this driver
    }
  }
}
