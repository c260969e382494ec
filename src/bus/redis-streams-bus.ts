/**
 * The Redis Streams bus driver: event streams (redis-event-streams.ts) and the work queue
 * (redis-work-queue.ts) shared by every node of a cluster through one Redis or a Redis Cluster.
 * How it keeps the contract of types.ts, and the key layout: docs/bus.md.
 *
 * Connections, named after the node:
 *   `<nodeId>:bus`            scripts (publish, readSince, head, enqueue, acks, retries,
 *                             heartbeats), from the configured factory
 *   `<nodeId>:bus-sub`        pub/sub, one per Redis node serving a subscribed channel, opened
 *                             from the scripts connection's options (redis-live.ts)
 *   `<nodeId>:<id>:jobs[:k]`  per consume() call, one per job shard, for its blocking reads
 *   `<nodeId>:fan:sub`        with the fan log, pub/sub for the fan shards' pushes, one per
 *                             Redis node serving a shard (redis-live.ts)
 *
 * With the fan log (config.fan), fanned channels live in redis-fan-log.ts, the others in
 * redis-event-streams.ts: a publishMany splits its channels between the two.
 */
import { isCluster, type RedisClient } from '../redis/client.ts';
import { PUBLISH_FAILOVER_MS, RedisEventStreams, retryThroughFailover } from './redis-event-streams.ts';
import { RedisFanLog } from './redis-fan-log.ts';
import { RedisWorkQueue } from './redis-work-queue.ts';
import {
  BusClosedError,
  defaultRetry,
  MAX_FAN_SHARDS,
  type Bus,
  type ConsumeOptions,
  type JobHandler,
  type Listener,
  type ReadSinceResult,
  type RedisBusConfig,
} from './types.ts';

export class RedisStreamsBus<E, J> implements Bus<E, J> {
  readonly driver = 'redis' as const;
  private readonly redis: RedisClient;
  private readonly streams: RedisEventStreams<E>;
  private readonly queue: RedisWorkQueue<J>;
  private readonly fan: RedisFanLog<E> | null;
  private readonly fanned: (channel: string) => boolean;
  private closed = false;

  constructor(config: RedisBusConfig) {
    const maxEventsPerChannel = config.window?.maxEventsPerChannel ?? 1000;
    const maxAgeMs = config.window?.maxAgeMs ?? 5 * 60_000;
    const maxQueued = config.maxQueuedJobs ?? 10_000;
    const claimIdleMs = config.claimIdleMs ?? 60_000;
    const blockMs = config.blockMs ?? 5_000;
    for (const [name, value] of Object.entries({ maxEventsPerChannel, maxAgeMs, maxQueued, claimIdleMs, blockMs, jobShards: config.jobShards ?? 1 })) {
      if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`bus: ${name} must be a positive integer (got ${value})`);
    }
    if (!/^[A-Za-z0-9._:-]+$/.test(config.nodeId)) throw new RangeError(`bus: nodeId must be letters, digits and . _ : - (got ${JSON.stringify(config.nodeId)})`);
    if (/[{}]/.test(config.keyPrefix)) throw new RangeError(`bus: keyPrefix must not contain braces: a hash tag there would put every key in one slot (got ${JSON.stringify(config.keyPrefix)})`);
    const open = (name: string): RedisClient => {
      const connection = config.redis(name);
      connection.on('error', () => undefined); // commands fail to their callers; ioredis reconnects
      return connection;
    };
    this.redis = open(`${config.nodeId}:bus`);
    // A Redis Cluster spreads the job queue over shards and keeps each message in its shard.
    const clustered = isCluster(this.redis);
    const jobShards = config.jobShards ?? (clustered ? 8 : 1);
    const sharded = config.shardedPubSub ?? clustered;
    this.streams = new RedisEventStreams<E>({
      redis: this.redis,
      subscriberName: `${config.nodeId}:bus-sub`,
      sharded,
      serial: clustered,
      keyPrefix: config.keyPrefix,
      maxEventsPerChannel,
      maxAgeMs,
      now: config.now,
      onListenerError: config.onListenerError ?? ((error, channel) => process.emitWarning(`bus listener on ${channel} threw: ${String(error)}`)),
    });
    this.queue = new RedisWorkQueue<J>({
      redis: this.redis,
      open,
      keyPrefix: config.keyPrefix,
      nodeId: config.nodeId,
      maxQueued,
      shards: jobShards,
      retry: config.retry ?? defaultRetry,
      onGiveUp: config.onGiveUp ?? ((_job, error) => process.emitWarning(`bus job given up: ${String(error)}`)),
      claimIdleMs,
      blockMs,
    });
    // After the queue: the fan log sends commands at once, and ioredis's auto-pipeline knows
    // only the scripts defined before its first command.
    const fan = config.fan;
    if (fan !== undefined && (!Number.isSafeInteger(fan.shards) || fan.shards < 1 || fan.shards > MAX_FAN_SHARDS)) throw new RangeError(`bus: fan.shards must be 1 to ${MAX_FAN_SHARDS} (got ${fan.shards})`);
    this.fanned = fan ? fan.fanned : () => false;
    this.fan = fan
      ? new RedisFanLog<E>({
          redis: this.redis,
          nodeId: config.nodeId,
          sharded,
          keyPrefix: config.keyPrefix,
          shards: fan.shards,
          maxAgeMs,
          maxEntries: fan.maxEntries ?? 100_000,
          serial: clustered,
          retry: (run) => (clustered ? retryThroughFailover(run, PUBLISH_FAILOVER_MS) : run()),
          now: config.now,
          onListenerError: config.onListenerError ?? ((error, channel) => process.emitWarning(`bus listener on ${channel} threw: ${String(error)}`)),
        })
      : null;
  }

  publish(channel: string, event: E): Promise<string> {
    if (this.closed) return Promise.reject(new BusClosedError());
    if (this.fan && this.fanned(channel)) return this.fan.publish([channel], event, '');
    return this.streams.publish(channel, event);
  }

  publishMany(channels: readonly string[], event: E, key = ''): Promise<string[]> {
    if (this.closed) return Promise.reject(new BusClosedError());
    if (!this.fan) return this.streams.publishMany(channels, event);
    const fanned = channels.filter(this.fanned);
    if (fanned.length === 0) return this.streams.publishMany(channels, event);
    const one = this.fan.publish(fanned, event, key);
    const others = fanned.length === channels.length ? [] : channels.filter((c) => !this.fanned(c));
    const rest = others.length === 0 ? Promise.resolve([]) : this.streams.publishMany(others, event);
    return Promise.all([one, rest]).then(([id, ids]) => {
      let i = 0;
      return channels.map((c) => (this.fanned(c) ? id : ids[i++]!));
    });
  }

  subscribe(channel: string, listener: Listener<E>, onGap?: () => void): () => void {
    if (this.closed) throw new BusClosedError();
    if (this.fan && this.fanned(channel)) return this.fan.subscribe(channel, listener, onGap);
    return this.streams.subscribe(channel, listener, onGap);
  }

  readSince(channel: string, lastEventId: string): Promise<ReadSinceResult<E>> {
    if (this.closed) return Promise.reject(new BusClosedError());
    if (this.fan && this.fanned(channel)) return this.fan.readSince(channel, lastEventId);
    return this.streams.readSince(channel, lastEventId);
  }

  head(channel: string): Promise<string> {
    if (this.closed) return Promise.reject(new BusClosedError());
    if (this.fan && this.fanned(channel)) return this.fan.head();
    return this.streams.head(channel);
  }

  current(channel: string): string | null {
    return this.fan && !this.closed && this.fanned(channel) ? this.fan.current() : null;
  }

  enqueue(job: J): Promise<void> {
    return this.queue.enqueue(job);
  }

  consume(handler: JobHandler<J>, options?: ConsumeOptions): () => Promise<void> {
    return this.queue.consume(handler, options);
  }

  /**
   * Closes every connection without waiting for running job handlers: their jobs stay pending in
   * the group and another node claims them after claimIdleMs (stop a consumer first to finish
   * them here).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.queue.close();
    this.streams.close();
    this.fan?.close();
    this.redis.disconnect();
  }
}
