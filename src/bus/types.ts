/**
 * The bus port: resumable event streams per channel, and a work queue for background jobs.
 *
 * Drivers: `local-bus.ts` (in-process; the single-node default and the fast tests) and, with the
 * cluster issue, a Redis Streams driver. `contract.ts` is the one suite every driver passes.
 *
 * Event streams (`publish`, `subscribe`, `readSince`) guarantee:
 *  - Ids. `publish` answers the id it gave the event: `<epoch>-<offset>`. Within one epoch of a
 *    channel, offsets strictly increase in publish order. The offset's shape is the driver's
 *    (in-process: a decimal counter starting at 1; Redis: the stream entry id), so callers treat
 *    ids as opaque strings and only hand them back to `readSince`.
 *  - Epochs. A channel's epoch is the generation of the history behind it. It changes whenever
 *    the driver may have lost a channel's history (a restarted in-process bus, a channel whose
 *    whole state was dropped, a Redis stream that was deleted), never otherwise. An id from
 *    another epoch therefore means "history lost", while a later id in the same epoch is
 *    only a gap that `readSince` can fill.
 *  - Order. Publishes to one channel issued by one caller, one after the other without awaiting,
 *    are appended in call order. Listeners of a channel see its events in id order; on one
 *    node, a listener sees an event no later than the publish's promise resolves.
 *  - Window. Each channel keeps at least its last `maxEventsPerChannel` events younger than
 *    `maxAgeMs` (the driver may keep fewer only to respect its total memory bound). `readSince`
 *    answers every event after the given id when all of them are still held, and
 *    `{ reset: true }` otherwise: the id is older than the window, from another epoch, malformed
 *    or unknown. A reset means "refetch state through the API", never "nothing missed".
 *  - Isolation. A listener that throws does not affect the publisher or other listeners; the
 *    error goes to the driver's error hook.
 *
 *  - Head. `head(channel)` answers the channel's current position: an id `readSince` accepts
 *    and answers every event published after `head` resolved (while they are held
 *    and the epoch lasts). It is the id of the newest event published in the channel's epoch,
 *    or, for a channel with no event in its epoch (never published, or its history dropped),
 *    an "empty at epoch E" position (`<epoch>-0` in-process, `<epoch>-0-0` on Redis) that fixes
 *    the epoch: later publishes continue it, so `readSince` answers them all instead of a reset.
 *    An epoch, empty or not, lasts in-process while the channel has a listener and for at least
 *    `maxAgeMs` after its last publish, `head` call or listener; on Redis for `maxAgeMs` plus a
 *    margin after its last publish (or, while empty, its last `head` call). Events published while
 *    `head` runs may or may not be after the answered position. On a channel this bus has just
 *    subscribed, `head` (like `readSince`) waits until the subscription is effective.
 *
 * Resume recipe (the SSE hub): subscribe first, then `readSince(lastEventId)` (or, with no id,
 * `head` to learn a position to resume from later); send the replayed events, then live ones,
 * skipping live events whose id was already replayed (compare by id equality; the ids of one
 * channel arrive in order).
 *
 * The work queue (`enqueue`, `consume`) guarantees at-least-once delivery to some consumer
 * while the driver holds the job: a job leaves the queue only when a handler resolved for it; a
 * handler that rejects gets it again after the driver's backoff, until the retry policy gives
 * up. Jobs are independent: no order between them is promised. The in-process driver holds jobs
 * in memory (lost with the process); the Redis driver holds them in a stream with a consumer
 * group (pending entries of a dead node are reclaimed).
 */
import type { RedisFactory } from '../redis/client.ts';

/** What a listener receives, and what `readSince` answers. */
export interface BusEntry<E> {
  /** `<epoch>-<offset>`; see the module comment. */
  id: string;
  channel: string;
  event: E;
  /**
   * `JSON.stringify(event)`, when the driver has it at hand (it serialized the event to hold it,
   * or received it as JSON): listeners that need the JSON (the SSE hub) then do not serialize
   * again. Drivers that can hand the listeners of one `publishMany` the same event object and
   * string do, so a listener may reuse what it built for the previous channel.
   */
  json?: string;
}

export type Listener<E> = (entry: BusEntry<E>) => void;

/**
 * `through` (drivers whose live delivery and history are read separately, the Redis fan log):
 * the id of the last event this bus delivered live to the channel's listeners before it took
 * the position the replay reads up to. A listener subscribed before `readSince` (the resume
 * recipe) drops its live events up to and including that one: they are in `events`, or at or
 * before `lastEventId`; every later live event follows the replay. Absent: compare ids instead
 * (see the resume recipe in the module comment).
 */
export type ReadSinceResult<E> = { reset: false; events: BusEntry<E>[]; through?: string } | { reset: true };

export interface EventStreams<E> {
  /** Appends `event` to `channel`, delivers it to the channel's listeners, answers its id. */
  publish(channel: string, event: E): Promise<string>;
  /**
   * Appends `event` to each of `channels` (distinct), as if published to each in turn in that
   * order (order, ids, window and listeners per channel as for `publish`; relative to the same
   * caller's other unawaited publishes it takes its place in call order), and answers the ids in
   * the order of `channels`. The driver shares the work: one serialization, and on Redis one
   * round trip whatever the number of channels. A GROUP message reaches its members this way.
   * `key` (default ''): drivers that spread events over shards (the Redis fan log) keep the
   * call order of one caller's publishes with the same key; the actor passes its conversation.
   */
  publishMany(channels: readonly string[], event: E, key?: string): Promise<string[]>;
  /**
   * Calls `listener` for every later event of `channel`; answers the unsubscribe function.
   * `onGap` runs when live delivery skipped events it can no longer deliver (a Redis failover
   * lost them, or they aged out of the window while the channel was unsubscribed): the listener
   * must then start over from a position it can resume from (the hub ends its streams, whose
   * clients resume with Last-Event-ID and get a `reset` when the window no longer holds it).
   */
  subscribe(channel: string, listener: Listener<E>, onGap?: () => void): () => void;
  /** The events of `channel` after `lastEventId`, oldest first, or a reset (see module comment). */
  readSince(channel: string, lastEventId: string): Promise<ReadSinceResult<E>>;
  /** The channel's current position, for a later `readSince` (see module comment). */
  head(channel: string): Promise<string>;
  /**
   * Drivers whose positions move without events of the channel (the Redis fan log: a position
   * covers every channel of a shard): the position of `channel` now, from memory, every event
   * up to it already delivered to this bus's listeners; null when it has none to give. A
   * stream refreshes the id of a quiet channel with it, so its client resumes from a recent
   * position rather than one the window may have dropped.
   */
  current?(channel: string): string | null;
}

export interface JobContext {
  /** 1 on the first delivery, then 2, 3, ... on retries. */
  attempt: number;
}

export type JobHandler<J> = (job: J, context: JobContext) => Promise<void>;

export interface ConsumeOptions {
  /** Jobs this consumer runs at once; default 1. */
  concurrency?: number;
}

export interface WorkQueue<J> {
  /**
   * Hands a job to the queue. Rejects with QueueFullError when the driver's bound is reached
   * (the caller decides whether to drop it: push delivery is best effort).
   */
  enqueue(job: J): Promise<void>;
  /**
   * Starts a consumer; answers a function that stops it (taking no new jobs) and resolves when
   * its running handlers have finished. Several consumers share the jobs.
   */
  consume(handler: JobHandler<J>, options?: ConsumeOptions): () => Promise<void>;
}

export interface Bus<E, J> extends EventStreams<E>, WorkQueue<J> {
  readonly driver: BusConfig['driver'];
  /**
   * Drivers whose jobs live in memory only (local): waits until the queued jobs were handled or
   * `deadline` (epoch ms) passed, and answers how many are still held (close() drops them).
   * Drivers that keep jobs durably do not have it.
   */
  drainJobs?(deadline: number): Promise<number>;
  /** Stops timers and consumers and drops listeners. Calls after close() reject. Idempotent. */
  close(): Promise<void>;
}

/** How many events a channel keeps for resume. */
export interface ResumeWindow {
  /** Default 1000. */
  maxEventsPerChannel?: number;
  /** Default 5 minutes. */
  maxAgeMs?: number;
}

/**
 * Retry policy of the work queue: the delay before the next attempt after attempt `attempt`
 * failed with `error`, or null to give up (the job is then handed to `onGiveUp`).
 */
export type RetryPolicy = (attempt: number, error: unknown) => number | null;

export type BusConfig = LocalBusConfig | RedisBusConfig;

export interface LocalBusConfig {
  driver: 'local';
  window?: ResumeWindow;
  /**
   * Bound on the bytes of events held across all channels (each event charged its JSON's UTF-8
   * length plus a fixed overhead per entry); default 64 MiB.
   */
  maxTotalBytes?: number;
  /** Bound on jobs waiting or waiting for a retry; default 10,000. */
  maxQueuedJobs?: number;
  /** Default: 200 ms doubling per attempt up to 30 s, giving up after 5 attempts. */
  retry?: RetryPolicy;
  /** Hooks for what the bus cannot throw to a caller. */
  onListenerError?: (error: unknown, channel: string) => void;
  onGiveUp?: (job: unknown, error: unknown) => void;
  /** Clock in epoch ms; tests inject one to age events without sleeping. */
  now?: () => number;
}

/**
 * The Redis Streams driver (redis-streams-bus.ts, docs/bus.md): every node of a cluster on one
 * Redis (6.2 or later) or on one Redis Cluster (7.0 or later) sees every channel's events and
 * shares one work queue.
 */
export interface RedisBusConfig {
  driver: 'redis';
  /** Opens the bus's connections: one for commands, one per consumer and job shard. */
  redis: RedisFactory;
  /** Prefix of every key and pub/sub channel, e.g. `chat:`; nodes of one cluster share it. */
  keyPrefix: string;
  /** This node's name, unique in the cluster: names its connections and its consumers. */
  nodeId: string;
  window?: ResumeWindow;
  /** Bound on jobs queued, running or waiting for a retry, across the cluster; default 10,000. */
  maxQueuedJobs?: number;
  /**
   * Job streams the work queue is spread over (each consumer reads all of them); default 1 on a
   * single Redis, 8 on a Redis Cluster. Change it only with the queue drained: jobs left in a
   * shard beyond the new count are not read.
   */
  jobShards?: number;
  /**
   * Sharded pub/sub (SPUBLISH/SSUBSCRIBE, Redis 7) for live delivery; default on a Redis Cluster
   * (a classic PUBLISH there is copied to every node), off on a single Redis.
   */
  shardedPubSub?: boolean;
  /**
   * The fan log (redis-fan-log.ts, docs/bus.md): channels for which `fanned` answers true are
   * published to and read from `shards` shared streams, one entry per publishMany whatever the
   * number of channels, instead of a stream per channel. Default: off (every channel has its
   * own stream). The chat service fans the users' own channels.
   */
  fan?: { shards: number; fanned: (channel: string) => boolean; maxEntries?: number };
  /** Default: as for the local driver. */
  retry?: RetryPolicy;
  /**
   * A job pending this long without a heartbeat from its consumer (whose node died) is claimed
   * by another consumer; default 60 s. Live consumers refresh their running jobs every third of it.
   */
  claimIdleMs?: number;
  /** Longest a consumer's read blocks before it looks at delayed jobs again; default 5 s. */
  blockMs?: number;
  onListenerError?: (error: unknown, channel: string) => void;
  onGiveUp?: (job: unknown, error: unknown) => void;
  /**
   * Clock in epoch ms for event ids and ages; tests inject one. Default: the Redis server's
   * clock, one clock for the whole cluster.
   */
  now?: () => number;
}

/**
 * Most shards of the fan log. A fanned channel's id holds a position per shard (at most 52
 * characters each, `.` between): with 8, the realtime stream's composite id for a credential
 * of 256 channels, one of them fanned, stays under its 16 KiB bound (realtime/event-id.ts).
 */
export const MAX_FAN_SHARDS = 8;

export class QueueFullError extends Error {
  readonly code = 'queue_full' as const;
  constructor(limit: number) {
    super(`work queue is full (${limit} jobs)`);
    this.name = 'QueueFullError';
  }
}

export class BusClosedError extends Error {
  readonly code = 'bus_closed' as const;
  constructor() {
    super('the bus is closed');
    this.name = 'BusClosedError';
  }
}

/** Default backoff: 200 ms, 400 ms, 800 ms, 1.6 s, then give up (5 attempts in all). */
export const defaultRetry: RetryPolicy = (attempt) => (attempt >= 5 ? null : Math.min(30_000, 200 * 2 ** (attempt - 1)));
