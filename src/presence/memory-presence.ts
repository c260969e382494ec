/**
 * In-process presence: a Map in least-recently-heartbeat order (a heartbeat re-inserts its key),
 * so the stalest entries sit at the front. Memory is bounded twice: entries older than the
 * window are swept from the front on each heartbeat (amortized O(1)), and past `maxEntries` the
 * stalest go first. A forgotten user answers `offline` with `last_seen_at: null`.
 */
import type { MemoryPresenceConfig, Presence, PresenceEntry } from './types.ts';

const key = (tenant_id: string, user_id: string): string => `${tenant_id}\u0000${user_id}`;

/** How long past the window a last_seen_at is still remembered (so offline users show it). */
const REMEMBER_WINDOWS = 60;

export class MemoryPresence implements Presence {
  readonly driver = 'memory' as const;
  readonly windowMs: number;
  private readonly maxEntries: number;
  private readonly seen = new Map<string, number>();

  constructor(config: MemoryPresenceConfig) {
    this.windowMs = config.windowMs;
    this.maxEntries = config.maxEntries ?? 1_000_000;
    if (!Number.isSafeInteger(this.windowMs) || this.windowMs < 1) throw new RangeError(`presence: windowMs must be a positive integer (got ${this.windowMs})`);
    if (!Number.isSafeInteger(this.maxEntries) || this.maxEntries < 1) throw new RangeError(`presence: maxEntries must be a positive integer (got ${this.maxEntries})`);
  }

  async heartbeat(tenant_id: string, user_id: string, now: number): Promise<void> {
    const k = key(tenant_id, user_id);
    const held = this.seen.get(k);
    if (held !== undefined && held >= now) return;
    this.seen.delete(k);
    this.seen.set(k, now);
    this.sweep(now);
  }

  async statuses(tenant_id: string, user_ids: readonly string[], now: number): Promise<PresenceEntry[]> {
    const out: PresenceEntry[] = [];
    for (const user_id of new Set(user_ids)) {
      const at = this.seen.get(key(tenant_id, user_id));
      out.push({
        user_id,
        status: at !== undefined && now - at <= this.windowMs ? 'online' : 'offline',
        last_seen_at: at === undefined ? null : new Date(at).toISOString(),
      });
    }
    return out;
  }

  async close(): Promise<void> {}

  /** Drops from the front: entries remembered long enough, then any past the size bound. */
  private sweep(now: number): void {
    const forgetBefore = now - this.windowMs * REMEMBER_WINDOWS;
    for (const [k, at] of this.seen) {
      if (at >= forgetBefore && this.seen.size <= this.maxEntries) break;
      this.seen.delete(k);
    }
  }
}
