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

type MemoStats = Readonly<{ hits: number; misses: number }> | null;

/** The embedded store's memos (store/sqlite/trigger-memo.ts), where it has them. */
export function registerStoreMemoMetrics(registry: Registry, memos: Record<string, () => MemoStats>): void {
  new Counter({
    name: 'chat_store_memo_requests_total',
    help: 'Reads asked of the embedded store memos (access checks, push device lists), by memo and result: hit (answered from memory) or miss (read)',
    labelNames: ['memo', 'result'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [memo, stats] of Object.entries(memos)) {
        const s = stats();
        if (s === null) continue;
        this.inc({ memo, result: 'hit' }, s.hits);
        this.inc({ memo, result: 'miss' }, s.misses);
      }
    },
  });
}
