/**
 * Push delivery metrics, read from the worker's counters at scrape time:
 *   chat_push_jobs_total                                new-message jobs taken (first attempts)
 *   chat_push_jobs_given_up_total                       jobs the work queue gave up (give-ups.ts)
 *   chat_push_notifications_total{outcome, platform}    per device: sent | pruned (gone) |
 *       rejected (refused, not retried) | skipped_online (its user is online) |
 *       skipped_unconfigured (no sender for its platform on this node); per job attempt:
 *       retried (failed on that platform and handed back for a retry).
 *       platform: web | fcm | apns.
 *   chat_push_jobs_skipped_online_total                 new messages that made no job: every
 *       candidate was online when they committed (the actor host's count, when it checks presence)
 */
import { Counter, type Registry } from 'prom-client';
import type { PushGiveUps } from './give-ups.ts';
import { PUSH_PLATFORMS, type PushOutcomeCounts, type PushWorkerStats } from './push-worker.ts';

const OUTCOMES: ReadonlyArray<[string, keyof PushOutcomeCounts]> = [
  ['sent', 'sent'],
  ['pruned', 'pruned'],
  ['rejected', 'rejected'],
  ['retried', 'retried'],
  ['skipped_online', 'skippedOnline'],
  ['skipped_unconfigured', 'skippedUnconfigured'],
];

export function registerPushMetrics(registry: Registry, stats: PushWorkerStats, giveUps: PushGiveUps, skippedOnline: () => number = () => 0): void {
  new Counter({
    name: 'chat_push_jobs_skipped_online_total',
    help: 'New messages that made no push job: every candidate was online when they committed',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(skippedOnline());
    },
  });
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
    name: 'chat_push_jobs_given_up_total',
    help: 'Push jobs given up by the work queue (attempts exhausted, or a Retry-After past the limit); each is logged with its ids',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(giveUps.count);
    },
  });
  new Counter({
    name: 'chat_push_notifications_total',
    help: 'Push outcomes per platform: sent, pruned (device gone), rejected (not retried), retried (job attempt failed), skipped_online, skipped_unconfigured',
    labelNames: ['outcome', 'platform'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const platform of PUSH_PLATFORMS) {
        for (const [outcome, key] of OUTCOMES) this.inc({ outcome, platform }, stats.platforms[platform][key]);
      }
    },
  });
}
