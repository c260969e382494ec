/**
 * In-process work queue: jobs in memory, handed to consumers as they have capacity, retried
 * after a failed handler with the configured backoff. At-least-once within the life of the
 * process (a job leaves only when a handler resolved for it or the retry policy gave up); a
 * graceful stop delivers what is queued first (`drain`), a crash loses it, which is acceptable
 * for best-effort push. Bounded: jobs waiting
 * plus jobs waiting for a retry never exceed `maxQueued`. Retry timers keep the process alive
 * until close() clears them: a job due for a retry is work still to do.
 */
import { BusClosedError, QueueFullError, type ConsumeOptions, type JobHandler, type RetryPolicy } from './types.ts';

interface Queued<J> {
  job: J;
  attempt: number;
}

interface Consumer<J> {
  handler: JobHandler<J>;
  concurrency: number;
  running: number;
  stopped: boolean;
  idle: Array<() => void>;
}

export interface LocalWorkQueueOptions {
  maxQueued: number;
  retry: RetryPolicy;
  onGiveUp: (job: unknown, error: unknown) => void;
}

export class LocalWorkQueue<J> {
  private ready: Queued<J>[] = [];
  private readonly retrying = new Set<NodeJS.Timeout>();
  private readonly consumers: Consumer<J>[] = [];
  /** Round-robin start, so one consumer does not take every job. */
  private turn = 0;
  private closed = false;

  constructor(private readonly o: LocalWorkQueueOptions) {}

  enqueue(job: J): Promise<void> {
    if (this.closed) return Promise.reject(new BusClosedError());
    if (this.ready.length + this.retrying.size >= this.o.maxQueued) return Promise.reject(new QueueFullError(this.o.maxQueued));
    this.ready.push({ job, attempt: 1 });
    this.pump();
    return Promise.resolve();
  }

  consume(handler: JobHandler<J>, options: ConsumeOptions = {}): () => Promise<void> {
    const concurrency = options.concurrency ?? 1;
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError('concurrency must be a positive integer');
    if (this.closed) throw new BusClosedError();
    const consumer: Consumer<J> = { handler, concurrency, running: 0, stopped: false, idle: [] };
    this.consumers.push(consumer);
    this.pump();
    return () => {
      consumer.stopped = true;
      const i = this.consumers.indexOf(consumer);
      if (i >= 0) this.consumers.splice(i, 1);
      return consumer.running === 0 ? Promise.resolve() : new Promise<void>((resolve) => consumer.idle.push(resolve));
    };
  }

  /** Jobs held (ready or waiting for a retry). */
  size(): number {
    return this.ready.length + this.retrying.size;
  }

  /**
   * Waits until no job is ready or running, or until `deadline` (epoch ms), and answers the jobs
   * still held then (ready, running, or waiting for a retry): at a graceful stop what was queued
   * is delivered before close() drops the rest. A job waiting for a retry is not waited for.
   */
  async drain(deadline: number, now: () => number = Date.now): Promise<number> {
    const busy = (): number => this.ready.length + this.consumers.reduce((n, c) => n + c.running, 0);
    while (busy() > 0 && now() < deadline && !this.closed) await new Promise((resolve) => setTimeout(resolve, 10));
    return busy() + this.retrying.size;
  }

  close(): void {
    this.closed = true;
    for (const timer of this.retrying) clearTimeout(timer);
    this.retrying.clear();
    this.ready = [];
    for (const consumer of this.consumers.splice(0)) consumer.stopped = true;
  }

  private pump(): void {
    while (this.ready.length > 0) {
      const consumer = this.nextConsumer();
      if (!consumer) return;
      this.run(consumer, this.ready.shift()!);
    }
  }

  private nextConsumer(): Consumer<J> | undefined {
    for (let i = 0; i < this.consumers.length; i += 1) {
      const consumer = this.consumers[(this.turn + i) % this.consumers.length]!;
      if (consumer.running < consumer.concurrency) {
        this.turn = (this.turn + i + 1) % this.consumers.length;
        return consumer;
      }
    }
    return undefined;
  }

  private run(consumer: Consumer<J>, item: Queued<J>): void {
    consumer.running += 1;
    let outcome: Promise<void>;
    try {
      outcome = consumer.handler(item.job, { attempt: item.attempt });
    } catch (error) {
      outcome = Promise.reject(error); // a handler that throws synchronously fails like one that rejects
    }
    outcome.then(
      () => this.finished(consumer),
      (error: unknown) => {
        this.finished(consumer);
        this.retry(item, error);
      },
    );
  }

  private finished(consumer: Consumer<J>): void {
    consumer.running -= 1;
    if (consumer.running === 0) for (const resolve of consumer.idle.splice(0)) resolve();
    this.pump();
  }

  private retry(item: Queued<J>, error: unknown): void {
    if (this.closed) return;
    const delay = this.o.retry(item.attempt, error);
    if (delay === null) {
      this.o.onGiveUp(item.job, error);
      return;
    }
    const timer = setTimeout(() => {
      this.retrying.delete(timer);
      if (this.closed) return;
      this.ready.push({ job: item.job, attempt: item.attempt + 1 });
      this.pump();
    }, delay);
    this.retrying.add(timer);
  }
}
