/**
 * Serialized history pages, kept per node and validated by the conversation's `revision`.
 *
 * A history page is the hottest read of a chat API (every open of a conversation, every scroll)
 * and, for a conversation nobody is writing to, the same bytes every time. So the node keeps the
 * serialized JSON of recent pages and answers a repeat with one primary-key read (the access
 * check it makes anyway, which also answers the conversation's revision) and a buffer copy.
 *
 * Correctness:
 *  - The store changes `revision` with every write a page shows (a message sent, edited,
 *    deleted or expired, a reaction), on every node, in the same transaction: an entry whose
 *    revision differs from the one just read is never served. So the cache needs no
 *    invalidation messages in a cluster.
 *  - The only per-viewer part of a page is `reacted_by_me`; a page without reactions is the same
 *    for every viewer. A page with reactions is cached per viewer.
 *  - Senders' display names are joined in from profiles, which change outside the conversation:
 *    an entry is served for at most `maxAgeMs` (default 5 s), the bound on how long a renamed
 *    sender keeps the old name in a repeated page.
 *  - The key holds the exact `before` cursor text: only a cursor that was verified when the page
 *    was built can hit, so a hit needs no second HMAC check.
 *
 * Memory is bounded by `maxBytes` (default 64 MiB): past it, the oldest entries go first.
 */

interface Entry {
  revision: number;
  at: number;
  /** The page, or PER_VIEWER when the page has reactions (then keyed per viewer). */
  bytes: Buffer | typeof PER_VIEWER;
}

const PER_VIEWER = Symbol('per-viewer');

export interface PageCacheOptions {
  maxBytes?: number;
  maxAgeMs?: number;
  now?: () => number;
}

export interface PageCacheStats {
  hits: number;
  misses: number;
  entries: number;
  bytes: number;
}

export class PageCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  private readonly maxBytes: number;
  private readonly maxAgeMs: number;
  private readonly now: () => number;
  readonly stats = { hits: 0, misses: 0 };

  constructor(options: PageCacheOptions = {}) {
    this.maxBytes = options.maxBytes ?? 64 * 1024 * 1024;
    this.maxAgeMs = options.maxAgeMs ?? 5000;
    this.now = options.now ?? Date.now;
  }

  /** The cached page for `key` at `revision` as seen by `viewer`, or undefined. */
  get(key: string, revision: number, viewer: string): Buffer | undefined {
    const now = this.now();
    let e = this.fresh(key, revision, now);
    if (e !== undefined && e.bytes === PER_VIEWER) e = this.fresh(`${key}\u0000${viewer}`, revision, now);
    if (e === undefined || e.bytes === PER_VIEWER) {
      this.stats.misses += 1;
      return undefined;
    }
    this.stats.hits += 1;
    return e.bytes;
  }

  /** Keeps `bytes` for `key` at `revision`; `perViewer` when the page differs between viewers. */
  set(key: string, revision: number, viewer: string, bytes: Buffer, perViewer: boolean): void {
    if (bytes.length > this.maxBytes / 16) return; // one page must not flush the cache
    const at = this.now();
    if (perViewer) {
      this.put(key, { revision, at, bytes: PER_VIEWER }, 0);
      this.put(`${key}\u0000${viewer}`, { revision, at, bytes }, bytes.length);
    } else this.put(key, { revision, at, bytes }, bytes.length);
  }

  snapshot(): PageCacheStats {
    return { entries: this.entries.size, bytes: this.bytes, ...this.stats };
  }

  private fresh(key: string, revision: number, now: number): Entry | undefined {
    const e = this.entries.get(key);
    if (e === undefined) return undefined;
    if (e.revision !== revision || now - e.at > this.maxAgeMs) {
      this.remove(key, e);
      return undefined;
    }
    return e;
  }

  private put(key: string, entry: Entry, size: number): void {
    const old = this.entries.get(key);
    if (old !== undefined) this.remove(key, old);
    this.entries.set(key, entry);
    this.bytes += size + key.length;
    for (const [k, e] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.remove(k, e);
    }
  }

  private remove(key: string, e: Entry): void {
    this.entries.delete(key);
    this.bytes -= (e.bytes === PER_VIEWER ? 0 : e.bytes.length) + key.length;
  }
}
