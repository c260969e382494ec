/**
 * In-process rate limiter: one Map entry per key, for the single-node default and fast tests.
 *
 * Memory is bounded two ways:
 *  - an unref'd timer deletes entries whose two windows have both passed (they decide nothing);
 *  - past `maxKeys`, inserting a key evicts the entry that least recently started a window. Map
 *    keeps insertion order and an entry is re-inserted whenever it rolls into a new window, so
 *    the first entry is the stalest. An evicted key starts over with full capacity, which only
 *    happens under a flood of distinct keys, and then forgetting is better than running out.
 */
import type { RateRule } from '../config/index.ts';
import type { RateDecision, RateLimiter } from './types.ts';
import { emptyState, expiresAt as stateExpiresAt, hit, validateRule, type WindowState } from './sliding-window.ts';

export interface MemoryRateLimiterOptions {
  /** Most keys held at once; default 1,000,000. */
  maxKeys?: number;
  /** How often expired keys are swept; default 30 s. 0 disables the timer (call sweep()). */
  sweepIntervalMs?: number;
  /** Clock for the sweeper and for consume() without `now`; default Date.now. */
  clock?: () => number;
}

interface Entry extends WindowState {
  expiresAt: number;
}

export class MemoryRateLimiter implements RateLimiter {
  readonly driver = 'memory' as const;
  private readonly entries = new Map<string, Entry>();
  private readonly maxKeys: number;
  private readonly clock: () => number;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(options: MemoryRateLimiterOptions = {}) {
    this.maxKeys = options.maxKeys ?? 1_000_000;
    if (!Number.isInteger(this.maxKeys) || this.maxKeys < 1) throw new RangeError('maxKeys must be a positive integer');
    this.clock = options.clock ?? Date.now;
    const every = options.sweepIntervalMs ?? 30_000;
    if (every > 0) {
      this.timer = setInterval(() => this.sweep(), every);
      this.timer.unref();
    }
  }

  get size(): number {
    return this.entries.size;
  }

  async consume(key: string, rule: RateRule, now: number = this.clock()): Promise<RateDecision> {
    return this.consumeSync(key, rule, now);
  }

  /** The same decision without a promise: the edge's hot path stays synchronous. */
  consumeSync(key: string, rule: RateRule, now: number = this.clock()): RateDecision {
    if (this.closed) throw new Error('rate limiter is closed');
    const w = validateRule(rule);
    const at = Math.floor(now);
    let entry = this.entries.get(key);
    if (entry === undefined) {
      if (this.entries.size >= this.maxKeys) this.evictOldest();
      entry = { expiresAt: 0, ...emptyState(w, at) };
      this.entries.set(key, entry);
    }
    const startBefore = entry.windowStart;
    const decision = hit(entry, rule.limit, w, at);
    if (entry.windowStart !== startBefore) {
      // Moved into a new window: move to the back of the eviction order.
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    entry.expiresAt = stateExpiresAt(entry, w);
    return decision;
  }

  /** Deletes entries that no longer weigh on any decision; returns how many. */
  sweep(now: number = this.clock()): number {
    let removed = 0;
    for (const [key, entry] of this.entries) {
      if (entry.expiresAt <= now) {
        this.entries.delete(key);
        removed += 1;
      }
    }
    return removed;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.entries.clear();
  }

  private evictOldest(): void {
    const oldest = this.entries.keys().next();
    if (oldest.done !== true) this.entries.delete(oldest.value);
  }
}
