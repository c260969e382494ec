/**
 * Channels of the Redis event streams whose subscription was lost (redis-live.ts reports them),
 * subscribed again and caught up one pass at a time: each pass refreshes the slot map first (a
 * promoted replica), then resumes every lost channel at once; those that fail wait for the next
 * pass, 100 ms after a failed one doubling to 1 s, back to at once after a pass that succeeded.
 */

const MIN_DELAY_MS = 100;
const MAX_DELAY_MS = 1000;

export interface ResubscriberHooks<S> {
  /** Reloads where channels live (a Cluster's slot map). */
  refresh(): Promise<void>;
  /** Still worth resuming: subscribed here and the bus open. */
  current(state: S): boolean;
  /** Subscribes again and catches up; false: not possible yet, try again later. */
  resume(state: S): Promise<boolean>;
}

export class Resubscriber<S> {
  private readonly pending = new Set<S>();
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private delay = 0;
  private closed = false;

  constructor(private readonly hooks: ResubscriberHooks<S>) {}

  add(state: S): void {
    this.pending.add(state);
    this.schedule();
  }

  delete(state: S): void {
    this.pending.delete(state);
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.pending.clear();
  }

  private schedule(): void {
    if (this.closed || this.timer || this.running || this.pending.size === 0) return;
    this.timer = setTimeout(() => void this.pass(), this.delay);
  }

  private async pass(): Promise<void> {
    this.timer = null;
    this.running = true;
    const states = [...this.pending].filter((s) => this.hooks.current(s));
    this.pending.clear();
    await this.hooks.refresh();
    const outcomes = await Promise.all(states.map(async (state) => ({ state, ok: await this.hooks.resume(state).catch(() => false) })));
    for (const { state, ok } of outcomes) if (!ok && this.hooks.current(state)) this.pending.add(state);
    this.running = false;
    this.delay = outcomes.some((o) => !o.ok) ? Math.min(MAX_DELAY_MS, Math.max(MIN_DELAY_MS, this.delay * 2)) : 0;
    this.schedule();
  }
}
