/**
 * Event-loop delay under prom-client's standard names (`nodejs_eventloop_lag_*_seconds`, what
 * Node.js dashboards query), replacing prom-client's own collector, whose figures are garbage
 * when a scrape finds its sampling window empty (the first scrape soon after start, or two
 * scrapes close together): min 9.2e9 s (the histogram's empty minimum), max 0, mean and stddev
 * NaN. Here an empty window keeps the previous window's figures, and before the first sample the
 * gauges have no value at all (absent, not wrong).
 *
 * The figures keep prom-client's meaning, so dashboards read them as for any Node.js service: per
 * window between scrapes, the distribution of the interval between ticks of a sampling timer
 * (`resolution`, 10 ms), which includes the interval itself (an idle loop shows about 10 ms).
 * `nodejs_eventloop_lag_seconds` is the delay of a setImmediate queued at the scrape, measured
 * before answering (prom-client reports the previous scrape's).
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { Registry } from 'prom-client';

export const EVENT_LOOP_RESOLUTION_MS = 10;

const WINDOW_STATS = {
  min: ['nodejs_eventloop_lag_min_seconds', 'The minimum recorded event loop delay.', (h: IntervalHistogram) => h.min],
  max: ['nodejs_eventloop_lag_max_seconds', 'The maximum recorded event loop delay.', (h: IntervalHistogram) => h.max],
  mean: ['nodejs_eventloop_lag_mean_seconds', 'The mean of the recorded event loop delays.', (h: IntervalHistogram) => h.mean],
  stddev: ['nodejs_eventloop_lag_stddev_seconds', 'The standard deviation of the recorded event loop delays.', (h: IntervalHistogram) => h.stddev],
  p50: ['nodejs_eventloop_lag_p50_seconds', 'The 50th percentile of the recorded event loop delays.', (h: IntervalHistogram) => h.percentile(50)],
  p90: ['nodejs_eventloop_lag_p90_seconds', 'The 90th percentile of the recorded event loop delays.', (h: IntervalHistogram) => h.percentile(90)],
  p99: ['nodejs_eventloop_lag_p99_seconds', 'The 99th percentile of the recorded event loop delays.', (h: IntervalHistogram) => h.percentile(99)],
} as const;
type Stat = keyof typeof WINDOW_STATS;

const LAG = 'nodejs_eventloop_lag_seconds';
export const EVENT_LOOP_METRICS: readonly string[] = [LAG, ...Object.values(WINDOW_STATS).map(([name]) => name)];

interface Value {
  value: number;
  labels: Record<string, string>;
}

/** Replaces the event-loop gauges collectDefaultMetrics registered on `registry`. */
export function registerEventLoopMetrics(registry: Registry, resolutionMs = EVENT_LOOP_RESOLUTION_MS): void {
  for (const name of EVENT_LOOP_METRICS) registry.removeSingleMetric(name);
  const histogram = monitorEventLoopDelay({ resolution: resolutionMs });
  histogram.enable();
  /** The figures of the window since the previous scrape, or of the last window that had samples. */
  let last: Record<Stat, number> | null = null;
  const takeWindow = (): void => {
    if (histogram.count === 0) return;
    const next = {} as Record<Stat, number>;
    for (const [stat, [, , read]] of Object.entries(WINDOW_STATS) as Array<[Stat, (typeof WINDOW_STATS)[Stat]]>) next[stat] = read(histogram) / 1e9;
    last = next;
    histogram.reset();
  };
  const register = (name: string, help: string, values: () => Promise<Value[]> | Value[]): void => {
    (registry as unknown as { registerMetric(m: unknown): void }).registerMetric({
      name,
      help,
      type: 'gauge',
      aggregator: 'average',
      get: async () => ({ name, help, type: 'gauge', aggregator: 'average', values: await values() }),
      reset: () => undefined,
    });
  };
  register(LAG, 'Lag of event loop in seconds.', async () => {
    const start = performance.now();
    await new Promise<void>((resolve) => setImmediate(resolve));
    return [{ value: (performance.now() - start) / 1000, labels: {} }];
  });
  for (const [stat, [name, help]] of Object.entries(WINDOW_STATS) as Array<[Stat, (typeof WINDOW_STATS)[Stat]]>) {
    register(name, help, () => {
      // A scrape reads the gauges in registration order: the first (min) takes the window, the
      // others read the same figures.
      if (stat === 'min') takeWindow();
      return last === null ? [] : [{ value: last[stat], labels: {} }];
    });
  }
}
