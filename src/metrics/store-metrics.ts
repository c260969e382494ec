/**
 * The embedded store's write path (SQLite group commit, store/sqlite/batcher.ts), read from the
 * store's counters when scraped: how long group commits take (the disk's fsync shows here first),
 * how many writes they carried and refused, and how many writes wait.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { COMMIT_BUCKETS, type BatcherStats } from '../store/sqlite/batcher.ts';

export interface StoreWriteSource {
  stats(): Readonly<BatcherStats>;
  writesInFlight(): number;
}

export function registerStoreWriteMetrics(registry: Registry, store: StoreWriteSource): void {
  const name = 'chat_store_group_commit_seconds';
  const help = 'Duration of each group commit of the embedded store, BEGIN to the end of COMMIT (its writes and the fsync)';
  const histogram = {
    name,
    help,
    type: 'histogram',
    aggregator: 'sum',
    get: async () => {
      const s = store.stats();
      const values: Array<{ value: number; labels: Record<string, string | number>; metricName: string }> = [];
      let cumulative = 0;
      COMMIT_BUCKETS.forEach((le, i) => {
        cumulative += s.commitBuckets[i] ?? 0;
        values.push({ value: cumulative, labels: { le }, metricName: `${name}_bucket` });
      });
      values.push({ value: s.transactions, labels: { le: '+Inf' }, metricName: `${name}_bucket` });
      values.push({ value: s.commitSeconds, labels: {}, metricName: `${name}_sum` });
      values.push({ value: s.transactions, labels: {}, metricName: `${name}_count` });
      return { name, help, type: 'histogram', aggregator: 'sum', values };
    },
    reset: () => {},
  };
  (registry as unknown as { registerMetric(m: unknown): void }).registerMetric(histogram);
  new Counter({
    name: 'chat_store_write_ops_total',
    help: 'Writes the embedded store ran in group commits, by outcome: committed, or failed (refused alone, or with their whole transaction)',
    labelNames: ['outcome'] as const,
    registers: [registry],
    collect() {
      const s = store.stats();
      this.reset();
      this.inc({ outcome: 'committed' }, s.ops - s.failedOps);
      this.inc({ outcome: 'failed' }, s.failedOps);
    },
  });
  new Counter({
    name: 'chat_store_group_commit_retries_total',
    help: 'Group commits run a second time write by write, because one of their writes failed',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(store.stats().retriedBatches);
    },
  });
  new Gauge({
    name: 'chat_store_writes_in_flight',
    help: 'Writes handed to the embedded store and not answered yet (queued for, or inside, a group commit)',
    registers: [registry],
    collect() {
      this.set(store.writesInFlight());
    },
  });
}
