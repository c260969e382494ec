/**
 * The in-process bus driver: event streams (local-streams.ts) and the work queue
 * (local-work-queue.ts) of one process. The single-node default; the contract suite's fast run.
 */
import { LocalStreams } from './local-streams.ts';
import { LocalWorkQueue } from './local-work-queue.ts';
import {
  BusClosedError,
  defaultRetry,
  type Bus,
  type ConsumeOptions,
  type JobHandler,
  type Listener,
  type LocalBusConfig,
  type ReadSinceResult,
} from './types.ts';

/** How often aged events are expired and idle channels dropped without any traffic. */
const SWEEP_MS = 10_000;

export class LocalBus<E, J> implements Bus<E, J> {
  readonly driver = 'local' as const;
  private readonly streams: LocalStreams<E>;
  private readonly queue: LocalWorkQueue<J>;
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;

  constructor(config: LocalBusConfig) {
    const maxEventsPerChannel = config.window?.maxEventsPerChannel ?? 1000;
    const maxAgeMs = config.window?.maxAgeMs ?? 5 * 60_000;
    const maxTotalBytes = config.maxTotalBytes ?? 64 * 1024 * 1024;
    const maxQueued = config.maxQueuedJobs ?? 10_000;
    for (const [name, value] of Object.entries({ maxEventsPerChannel, maxAgeMs, maxTotalBytes, maxQueued })) {
      if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`bus: ${name} must be a positive integer (got ${value})`);
    }
    this.streams = new LocalStreams<E>({
      maxEventsPerChannel,
      maxAgeMs,
      maxTotalBytes,
      now: config.now ?? Date.now,
      onListenerError: config.onListenerError ?? ((error, channel) => process.emitWarning(`bus listener on ${channel} threw: ${String(error)}`)),
    });
    this.queue = new LocalWorkQueue<J>({
      maxQueued,
      retry: config.retry ?? defaultRetry,
      onGiveUp: config.onGiveUp ?? ((_job, error) => process.emitWarning(`bus job given up: ${String(error)}`)),
    });
    this.sweeper = setInterval(() => this.streams.sweep(), SWEEP_MS);
    this.sweeper.unref();
  }

  publish(channel: string, event: E): Promise<string> {
    if (this.closed) return Promise.reject(new BusClosedError());
    return Promise.resolve(this.streams.publish(channel, event));
  }

  /** One serialization and one ring write for every channel (local-streams.ts shares them). */
  publishMany(channels: readonly string[], event: E, _key?: string): Promise<string[]> {
    if (this.closed) return Promise.reject(new BusClosedError());
    const ids: string[] = [];
    for (const channel of channels) ids.push(this.streams.publish(channel, event));
    return Promise.resolve(ids);
  }

  subscribe(channel: string, listener: Listener<E>, onGap?: () => void): () => void {
    if (this.closed) throw new BusClosedError();
    return this.streams.subscribe(channel, listener, onGap);
  }

  readSince(channel: string, lastEventId: string): Promise<ReadSinceResult<E>> {
    if (this.closed) return Promise.reject(new BusClosedError());
    return Promise.resolve(this.streams.readSince(channel, lastEventId));
  }

  head(channel: string): Promise<string> {
    if (this.closed) return Promise.reject(new BusClosedError());
    return Promise.resolve(this.streams.head(channel));
  }

  enqueue(job: J): Promise<void> {
    return this.queue.enqueue(job);
  }

  consume(handler: JobHandler<J>, options?: ConsumeOptions): () => Promise<void> {
    return this.queue.consume(handler, options);
  }

  /**
   * Delivers what is queued before a graceful stop (local-work-queue.ts `drain`); answers the jobs
   * still held at `deadline`, which close() drops (the Redis bus keeps them in its stream instead).
   */
  drainJobs(deadline: number): Promise<number> {
    return this.queue.drain(deadline);
  }

  /** Held events, bytes and channels, and queued jobs: for tests and metrics. */
  stats(): { channels: number; events: number; bytes: number; jobs: number } {
    return { jobs: this.queue.size(), ...this.streams.stats() };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.sweeper);
    this.queue.close();
    this.streams.clear();
  }
}
