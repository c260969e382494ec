/**
 * The node's process metrics: standard Node.js names (what dashboards query), and event-loop
 * gauges that are never garbage: absent before the first sample, the previous window's figures
 * when a scrape finds the window empty (prom-client's own reported min 9.2e9 s and mean NaN then).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Metrics } from '../../src/metrics/index.ts';

const samples = (text: string, prefix: string): Map<string, number> =>
  new Map(text.split('\n').filter((l) => l.startsWith(prefix)).map((l) => [l.split(' ')[0] as string, Number(l.split(' ')[1])]));

test('process metrics keep their standard names', async () => {
  const text = await new Metrics().registry.metrics();
  for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'process_start_time_seconds', 'nodejs_heap_size_used_bytes', 'nodejs_gc_duration_seconds', 'nodejs_eventloop_lag_p99_seconds']) {
    assert.match(text, new RegExp(`^# TYPE ${name} `, 'm'), name);
  }
  assert.doesNotMatch(text, /chat_process_/);
});

test('event-loop lag: absent before a sample, sane after, kept when a scrape finds the window empty', async () => {
  const metrics = new Metrics();
  const first = samples(await metrics.registry.metrics(), 'nodejs_eventloop_lag_');
  // At once after start the sampling timer has not ticked: only the setImmediate lag is known.
  assert.deepEqual([...first.keys()], ['nodejs_eventloop_lag_seconds']);
  for (const v of first.values()) assert.ok(Number.isFinite(v) && v >= 0 && v < 1, String(v));

  await new Promise((r) => setTimeout(r, 200));
  const second = samples(await metrics.registry.metrics(), 'nodejs_eventloop_lag_');
  assert.equal(second.size, 8, [...second.keys()].join(', '));
  for (const [name, v] of second) assert.ok(Number.isFinite(v) && v >= 0 && v < 1, `${name} ${v}`);
  assert.ok((second.get('nodejs_eventloop_lag_min_seconds') as number) <= (second.get('nodejs_eventloop_lag_max_seconds') as number));

  // Scraped again at once: an empty window keeps the previous figures.
  const third = samples(await metrics.registry.metrics(), 'nodejs_eventloop_lag_');
  for (const [name, v] of second) if (name !== 'nodejs_eventloop_lag_seconds') assert.equal(third.get(name), v, name);
});
