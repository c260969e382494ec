/**
 * Push delivery metrics, read from the worker's counters at scrape time:
 *   chat_push_jobs_total                       new-message jobs taken (first attempts)
 *   chat_push_notifications_total{outcome}     sent | pruned (404/410) | rejected (other 4xx)
 *                                              | retried (jobs failed for a retry) | skipped_online
 */
import { Counter, type Registry } from 'prom-client';
import type { PushWorkerStats } from './push-worker.ts';

export function registerPushMetrics(registry: Registry, stats: PushWorkerStats): void {
  new Counter({
    name: 'chat_push_jobs_total',
    help: 'Push jobs (one per new message) taken by this node',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(stats.jobs);
    },
  });
  new Counter({
    name: 'chat_push_notifications_total',
    help: 'Web push outcomes: sent, pruned (404/410), rejected (other 4xx), retried (job failed for a retry), skipped_online',
    labelNames: ['outcome'] as const,
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ outcome: 'sent' }, stats.sent);
      this.inc({ outcome: 'pruned' }, stats.pruned);
      this.inc({ outcome: 'rejected' }, stats.rejected);
      this.inc({ outcome: 'retried' }, stats.retried);
      this.inc({ outcome: 'skipped_online' }, stats.skippedOnline);
    },
  });
}
