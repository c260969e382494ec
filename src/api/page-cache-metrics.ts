/** History page cache metrics, read from the cache's counters when scraped. */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { PageCache } from './page-cache.ts';

export function registerPageCacheMetrics(registry: Registry, cache: PageCache): void {
  new Counter({
    name: 'chat_history_cache_requests_total',
    help: 'History pages asked of the page cache, by result: hit (served from memory) or miss (built from the store)',
    labelNames: ['result'] as const,
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ result: 'hit' }, cache.stats.hits);
      this.inc({ result: 'miss' }, cache.stats.misses);
    },
  });
  new Gauge({
    name: 'chat_history_cache_bytes',
    help: 'Bytes of serialized pages the cache holds',
    registers: [registry],
    collect() {
      this.set(cache.snapshot().bytes);
    },
  });
}

/** The embedded store's memo of access checks (store/sqlite/gate-cache.ts), when it has one. */
export function registerGateCacheMetrics(registry: Registry, stats: () => Readonly<{ hits: number; misses: number }> | null): void {
  new Counter({
    name: 'chat_store_gate_cache_requests_total',
    help: 'Access checks of reads inside a conversation asked of the store memo, by result: hit (answered from memory) or miss (read)',
    labelNames: ['result'] as const,
    registers: [registry],
    collect() {
      const s = stats();
      this.reset();
      if (s === null) return;
      this.inc({ result: 'hit' }, s.hits);
      this.inc({ result: 'miss' }, s.misses);
    },
  });
}
