/**
 * The retention job: every CHAT_RETENTION_INTERVAL_MS, for each tenant with
 * `message_retention_days` set, really deletes (not tombstones) the messages created more than
 * that many days ago, with their reactions.
 *
 * - Bounded work per transaction: the store deletes in batches (RETENTION_BATCH rows, each its own
 *   transaction), so sends and reads interleave with a large purge.
 * - One run at a time per node; a run that overlaps the next tick is not doubled, the tick is
 *   skipped. Stopping waits for the tenant being purged, then no further tenant is started.
 * - In a cluster, one node purges per interval: each tick first takes a lease (a Redis key set
 *   with NX and a time to live just under the interval; retention-lease.ts); the nodes that do
 *   not get it skip the tick. Deletion is idempotent anyway, so a lease lost to a crash costs
 *   only a repeated or delayed pass, never data. A cluster of one needs no lease.
 *   A node started with CHAT_RETENTION_INTERVAL_MS=0 never purges.
 * - The first run comes shortly after start (min(interval, 10 s)), so frequent restarts cannot
 *   starve it.
 * - A failing tenant (a store error) is logged and skipped; the next run tries again.
 */
import type { Logger } from '../log/index.ts';
import type { ChatStore } from '../store/index.ts';

export const RETENTION_BATCH = 500;
const FIRST_RUN_MAX_DELAY_MS = 10_000;

export interface RetentionRun {
  tenants: number;
  deleted: number;
  failed: number;
}

/** One pass over every tenant with a retention setting. `at` is "now" (tests move it). */
export async function runRetentionOnce(
  store: Pick<ChatStore, 'settings' | 'messages'>,
  log: Logger,
  opts: { at?: string; shouldStop?: () => boolean } = {},
): Promise<RetentionRun> {
  const started = Date.now();
  const work = await store.settings.listRetention();
  const run: RetentionRun = { tenants: 0, deleted: 0, failed: 0 };
  for (const { tenant_id, message_retention_days } of work) {
    if (opts.shouldStop?.()) break;
    try {
      const deleted = await store.messages.deleteExpired({ tenant_id, days: message_retention_days, at: opts.at, batch_size: RETENTION_BATCH });
      run.tenants++;
      run.deleted += deleted;
      if (deleted > 0) log.info({ tenant_id, retention_days: message_retention_days, deleted }, 'retention: expired messages deleted');
    } catch (err) {
      run.failed++;
      log.error({ tenant_id, err: (err as Error).message }, 'retention: purge failed for tenant');
    }
  }
  log.info({ ms: Date.now() - started, ...run }, 'retention run finished');
  return run;
}

export interface RetentionJob {
  /** Stops scheduling and waits for a run in progress to stop at the next tenant boundary. */
  stop(): Promise<void>;
}

export interface RetentionStats {
  runs: number;
  deleted: number;
  failedTenants: number;
  /** Ticks skipped because another node held the lease. */
  skipped: number;
}

export interface RetentionOptions {
  /** Answers whether this node may run this tick (the cluster's lease); default: always. */
  lease?: () => Promise<boolean>;
  stats?: RetentionStats;
}

export function newRetentionStats(): RetentionStats {
  return { runs: 0, deleted: 0, failedTenants: 0, skipped: 0 };
}

export function startRetentionJob(store: Pick<ChatStore, 'settings' | 'messages'>, intervalMs: number, log: Logger, options: RetentionOptions = {}): RetentionJob {
  const stats = options.stats ?? newRetentionStats();
  const lease = options.lease ?? (async () => true);
  if (intervalMs <= 0) {
    log.info('retention job off (CHAT_RETENTION_INTERVAL_MS=0)');
    return { stop: async () => {} };
  }
  let stopped = false;
  let running: Promise<unknown> | null = null;
  let timer: NodeJS.Timeout | null = null;

  const tick = (): void => {
    if (stopped) return;
    if (running === null) {
      running = lease()
        .then(async (mine) => {
          if (!mine) {
            stats.skipped += 1;
            return;
          }
          const run = await runRetentionOnce(store, log, { shouldStop: () => stopped });
          stats.runs += 1;
          stats.deleted += run.deleted;
          stats.failedTenants += run.failed;
        })
        .catch((err: unknown) => log.error({ err: (err as Error).message }, 'retention run failed'))
        .finally(() => (running = null));
    }
    timer = setTimeout(tick, intervalMs);
    timer.unref();
  };
  timer = setTimeout(tick, Math.min(intervalMs, FIRST_RUN_MAX_DELAY_MS));
  timer.unref();
  log.info({ interval_ms: intervalMs }, 'retention job scheduled');

  return {
    async stop() {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
      await running;
    },
  };
}
