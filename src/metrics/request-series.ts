/**
 * Request count and latency histogram for the edge, kept in plain typed arrays and exposed to the
 * prom-client registry as two ordinary metrics (`chat_http_requests_total`,
 * `chat_http_request_duration_seconds`). prom-client's own histogram hashes labels and walks
 * objects on every observation; at tens of thousands of requests per second per core that cost
 * shows, so the hot path here is: one Map lookup per (route, method, status), one bucket search.
 */
import type { Registry } from 'prom-client';

export const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

interface Series {
  labels: { route: string; method: string; status: string };
  /** Cumulative counts are computed at scrape time; here each observation lands in one bucket. */
  buckets: Float64Array;
  count: number;
  sum: number;
}

interface Value {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

export class RequestSeries {
  private readonly series = new Map<string, Series>();

  register(registry: Registry): void {
    const self = this;
    const metric = (name: string, help: string, type: 'counter' | 'histogram', values: () => Value[]) => ({
      name,
      help,
      type,
      aggregator: 'sum',
      get: async () => ({ name, help, type, aggregator: 'sum', values: values() }),
      reset: () => {
        self.series.clear();
        self.byRoute.clear();
      },
    });
    const reg = registry as unknown as { registerMetric(m: unknown): void };
    reg.registerMetric(
      metric('chat_http_requests_total', 'HTTP requests answered, by route template, method and status', 'counter', () =>
        [...this.series.values()].map((s) => ({ value: s.count, labels: s.labels })),
      ),
    );
    reg.registerMetric(
      metric('chat_http_request_duration_seconds', 'Time from request start to response end, by route template, method and status', 'histogram', () =>
        [...this.series.values()].flatMap((s) => this.histogramValues(s)),
      ),
    );
  }

  /** Per (route, method): the series by status, so the hot path does no string building. */
  private readonly byRoute = new Map<string, Map<string, Map<number, Series>>>();

  observe(route: string, method: string, status: number, seconds: number): void {
    let methods = this.byRoute.get(route);
    if (methods === undefined) this.byRoute.set(route, (methods = new Map()));
    let statuses = methods.get(method);
    if (statuses === undefined) methods.set(method, (statuses = new Map()));
    let s = statuses.get(status);
    if (s === undefined) {
      const key = `${method} ${status} ${route}`;
      s = { labels: { route, method, status: String(status) }, buckets: new Float64Array(DURATION_BUCKETS.length), count: 0, sum: 0 };
      this.series.set(key, s);
      statuses.set(status, s);
    }
    s.count++;
    s.sum += seconds;
    for (let i = 0; i < DURATION_BUCKETS.length; i++) {
      if (seconds <= (DURATION_BUCKETS[i] as number)) {
        s.buckets[i] = (s.buckets[i] as number) + 1;
        break;
      }
    }
  }

  private histogramValues(s: Series): Value[] {
    const out: Value[] = [];
    let cumulative = 0;
    for (let i = 0; i < DURATION_BUCKETS.length; i++) {
      cumulative += s.buckets[i] as number;
      out.push({ value: cumulative, labels: { le: DURATION_BUCKETS[i] as number, ...s.labels }, metricName: 'chat_http_request_duration_seconds_bucket' });
    }
    out.push({ value: s.count, labels: { le: '+Inf', ...s.labels }, metricName: 'chat_http_request_duration_seconds_bucket' });
    out.push({ value: s.sum, labels: s.labels, metricName: 'chat_http_request_duration_seconds_sum' });
    out.push({ value: s.count, labels: s.labels, metricName: 'chat_http_request_duration_seconds_count' });
    return out;
  }
}

/**
 * A counter with one label, incremented on hot paths: plain numbers, read by prom-client at scrape
 * time. Label values must come from a small fixed set (a result, a policy), never from input.
 */
export class EventCounter<L extends string> {
  private readonly counts = new Map<L, number>();

  constructor(registry: Registry, name: string, help: string, label: string) {
    const values = (): Value[] => [...this.counts].map(([v, n]) => ({ value: n, labels: { [label]: v } }));
    (registry as unknown as { registerMetric(m: unknown): void }).registerMetric({
      name,
      help,
      type: 'counter',
      aggregator: 'sum',
      get: async () => ({ name, help, type: 'counter', aggregator: 'sum', values: values() }),
      reset: () => this.counts.clear(),
    });
  }

  inc(value: L): void {
    this.counts.set(value, (this.counts.get(value) ?? 0) + 1);
  }
}
