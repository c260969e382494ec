/** Retention metrics, read from the job's counters when scraped. */
import { Counter, type Registry } from 'prom-client';
import type { RetentionStats } from './retention-job.ts';

export function registerRetentionMetrics(registry: Registry, stats: RetentionStats): void {
  new Counter({
    name: 'chat_retention_runs_total',
    help: 'Retention passes by outcome: run (this node purged), skipped (another node held the lease)',
    labelNames: ['outcome'] as const,
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ outcome: 'run' }, stats.runs);
      this.inc({ outcome: 'skipped' }, stats.skipped);
    },
  });
  new Counter({
    name: 'chat_retention_deleted_messages_total',
    help: 'Messages deleted by retention on this node',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(stats.deleted);
    },
  });
  new Counter({
    name: 'chat_retention_failed_tenants_total',
    help: 'Tenants whose purge failed (retried at the next pass)',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(stats.failedTenants);
    },
  });
}
