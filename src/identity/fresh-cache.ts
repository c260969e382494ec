/**
 * A cache of identity answers with a freshness bound.
 *
 * - An answer younger than `ttlMs` is served without asking the IdP.
 * - Concurrent misses for one key share one lookup (coalescing), so a burst of calls for a cold
 *   context costs the IdP one request.
 * - A failed lookup is not cached: the next call asks again. An answer older than `ttlMs` is never
 *   served by `peek`/`get`, not even when the IdP is down: the contract wants
 *   `identity_unavailable` then. `lastKnown` still returns it, for decisions that are not
 *   authorization (CORS: so a browser can read the 503 and its Retry-After).
 * - Bounded: past `maxEntries`, the oldest entries are dropped (Map keeps insertion order).
 */
export interface FreshCacheStats {
  hit(): void;
  miss(): void;
  error(): void;
}

export class FreshCache<V> {
  private readonly entries = new Map<string, { value: V; at: number }>();
  private readonly inflight = new Map<string, Promise<V>>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly stats?: FreshCacheStats,
    private readonly now: () => number = Date.now,
  ) {}

  /** The fresh value for `key`, or undefined. Synchronous: the hot path stays free of awaits. */
  peek(key: string): V | undefined {
    const e = this.entries.get(key);
    if (e === undefined) return undefined;
    if (this.now() - e.at >= this.ttlMs) return undefined;
    return e.value;
  }

  /** The last answer seen for `key`, however old (bounded by eviction only). */
  lastKnown(key: string): V | undefined {
    return this.entries.get(key)?.value;
  }

  get(key: string, load: () => Promise<V>): Promise<V> {
    const fresh = this.peek(key);
    if (fresh !== undefined) {
      this.stats?.hit();
      return Promise.resolve(fresh);
    }
    const pending = this.inflight.get(key);
    if (pending) {
      this.stats?.hit();
      return pending;
    }
    this.stats?.miss();
    const p = load().then(
      (value) => {
        this.inflight.delete(key);
        this.set(key, value);
        return value;
      },
      (err: unknown) => {
        this.inflight.delete(key);
        this.stats?.error();
        throw err;
      },
    );
    this.inflight.set(key, p);
    return p;
  }

  set(key: string, value: V): void {
    if (this.ttlMs <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, { value, at: this.now() });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
  }

  invalidate(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
