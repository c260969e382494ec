/**
 * The Redis Streams bus driver: event streams (redis-event-streams.ts) and the work queue
 * (redis-work-queue.ts) shared by every node of a cluster through one Redis. How it keeps the
 * contract of types.ts, and the key layout: docs/bus.md.
 *
 * Connections, all from the configured factory and named after the node:
 *   `<nodeId>:bus`         scripts (publish, readSince, head, enqueue, acks, retries, heartbeats)
 *   `<nodeId>:bus-sub`     pub/sub, opened with the first subscribe
 *   `<nodeId>:<id>:jobs`   one per consume() call, for its blocking reads
 */
import type { Redis } from 'ioredis';
import { RedisEventStreams } from './redis-event-streams.ts';
import { RedisWorkQueue } from './redis-work-queue.ts';
import {
  BusClosedError,
  defaultRetry,
  type Bus,
  type ConsumeOptions,
  type JobHandler,
  type Listener,
  type ReadSinceResult,
  type RedisBusConfig,
} from './types.ts';

export class RedisStreamsBus<E, J> implements Bus<E, J> {
  readonly driver = 'redis' as const;
  private readonly redis: Redis;
  private readonly streams: RedisEventStreams<E>;
  private readonly queue: RedisWorkQueue<J>;
  private closed = false;

  constructor(config: RedisBusConfig) {
    const maxEventsPerChannel = config.window?.maxEventsPerChannel ?? 1000;
    const maxAgeMs = config.window?.maxAgeMs ?? 5 * 60_000;
    const maxQueued = config.maxQueuedJobs ?? 10_000;
    const claimIdleMs = config.claimIdleMs ?? 60_000;
    const blockMs = config.blockMs ?? 5_000;
    for (const [name, value] of Object.entries({ maxEventsPerChannel, maxAgeMs, maxQueued, claimIdleMs, blockMs })) {
      if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`bus: ${name} must be a positive integer (got ${value})`);
    }
    if (!/^[A-Za-z0-9._:-]+$/.test(config.nodeId)) throw new RangeError(`bus: nodeId must be letters, digits and . _ : - (got ${JSON.stringify(config.nodeId)})`);
    const open = (name: string): Redis => {
      const connection = config.redis(name);
      connection.on('error', () => undefined); // commands fail to their callers; ioredis reconnects
      return connection;
    };
    this.redis = open(`${config.nodeId}:bus`);
    this.streams = new RedisEventStreams<E>({
      redis: this.redis,
      openSubscriber: () => open(`${config.nodeId}:bus-sub`),
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
      retry: config.retry ?? defaultRetry,
      onGiveUp: config.onGiveUp ?? ((_job, error) => process.emitWarning(`bus job given up: ${String(error)}`)),
      claimIdleMs,
      blockMs,
    });
  }

  publish(channel: string, event: E): Promise<string> {
    if (this.closed) return Promise.reject(new BusClosedError());
    return this.streams.publish(channel, event);
  }

  subscribe(channel: string, listener: Listener<E>): () => void {
    if (this.closed) throw new BusClosedError();
    return this.streams.subscribe(channel, listener);
  }

  readSince(channel: string, lastEventId: string): Promise<ReadSinceResult<E>> {
    if (this.closed) return Promise.reject(new BusClosedError());
    return this.streams.readSince(channel, lastEventId);
  }

  head(channel: string): Promise<string> {
    if (this.closed) return Promise.reject(new BusClosedError());
    return this.streams.head(channel);
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
    this.redis.disconnect();
  }
}
