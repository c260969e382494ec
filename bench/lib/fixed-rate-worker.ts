/**
 * The fixed-rate (open-loop) load generator, run as its own process by bench/lib/fixed-rate.ts
 * (pinned to the load CPU, like wrk): `node --import tsx bench/lib/fixed-rate-worker.ts <config.json>`.
 *
 * Request i is due at t0 + i / rate, whatever happened to the requests before it: a slow answer
 * does not delay the next sends (wrk's closed loop would, hiding the stall: coordinated omission).
 * Latency is measured from the request's SCHEDULED start to the end of its response, so time spent
 * queued behind busy connections, or behind a late timer of this generator, counts against the
 * server, as a user would see it. How late this process itself fired each request ("lag") is
 * reported apart, so a generator that cannot keep up shows instead of silently skewing figures.
 *
 * HTTP/1.1 keep-alive through node:http with at most `connections` sockets; requests beyond that
 * wait in the agent's FIFO queue (their wait counts). The request mix is picked per request with a
 * seeded PRNG. The first `warmupSeconds` run on the same schedule and are not recorded.
 *
 * Last stdout line: one JSON object (FixedRateReport in fixed-rate.ts).
 */
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

interface MixRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

interface Config {
  origin: string;
  requests: MixRequest[];
  rate: number;
  seconds: number;
  warmupSeconds: number;
  connections: number;
  timeoutMs: number;
  seed: number;
}

const config = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Config;
const url = new URL(config.origin);
const agent = new http.Agent({ keepAlive: true, maxSockets: config.connections, maxFreeSockets: config.connections, scheduling: 'fifo' });

// Requests prepared once: headers with Content-Length, bodies as Buffers.
const prepared = config.requests.map((r) => {
  const body = r.body === undefined ? undefined : Buffer.from(r.body, 'utf8');
  const headers: Record<string, string> = { ...(r.headers ?? {}) };
  if (body) headers['Content-Length'] = String(body.length);
  return { method: r.method, path: r.path, headers, body };
});

/** mulberry32: a small seeded PRNG, so every run (and target) gets the same request sequence. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = prng(config.seed);

const intervalMs = 1000 / config.rate;
const warmupCount = Math.round(config.rate * config.warmupSeconds);
const total = warmupCount + Math.round(config.rate * config.seconds);
const measuredCount = total - warmupCount;

const latencies = new Float64Array(measuredCount);
const lags = new Float64Array(measuredCount);
let recorded = 0;
let lagged = 0;
const statuses: Record<string, number> = {};
const errors: Record<string, number> = {};
let firstError: string | null = null;
let outstanding = 0;
let next = 0;
let t0 = 0;
let lastEnd = 0;

function fail(kind: string, detail: string): void {
  errors[kind] = (errors[kind] ?? 0) + 1;
  firstError ??= `${kind}: ${detail}`;
}

function fire(i: number, now: number): void {
  const scheduled = t0 + i * intervalMs;
  const measured = i >= warmupCount;
  if (measured) lags[lagged++] = now - scheduled;
  const r = prepared[Math.floor(random() * prepared.length)]!;
  outstanding += 1;
  let settled = false;
  const done = (): void => {
    if (settled) return;
    settled = true;
    outstanding -= 1;
    if (outstanding === 0 && next >= total) finish();
  };
  const req = http.request({ agent, host: url.hostname, port: url.port, method: r.method, path: r.path, headers: r.headers }, (res) => {
    const status = res.statusCode ?? 0;
    res.resume();
    res.once('end', () => {
      const end = performance.now();
      if (measured) {
        statuses[String(status)] = (statuses[String(status)] ?? 0) + 1;
        latencies[recorded++] = end - scheduled;
        lastEnd = end;
      } else if (status < 200 || status > 299) {
        statuses[String(status)] = (statuses[String(status)] ?? 0) + 1;
      }
      if ((status < 200 || status > 299) && firstError === null) firstError = `status ${status} for ${r.method} ${r.path}`;
      done();
    });
    res.once('error', (err) => {
      fail('response', err.message);
      done();
    });
  });
  req.setTimeout(config.timeoutMs, () => {
    fail('timeout', `no answer within ${config.timeoutMs} ms for ${r.method} ${r.path}`);
    req.destroy();
    done();
  });
  req.once('error', (err) => {
    fail('socket', err.message);
    done();
  });
  req.end(r.body);
}

function pump(): void {
  const now = performance.now();
  while (next < total && t0 + next * intervalMs <= now) fire(next++, now);
  if (next >= total) {
    if (outstanding === 0) finish();
    return;
  }
  const wait = t0 + next * intervalMs - performance.now();
  // Timers are late by up to a millisecond or so; the last stretch is covered by setImmediate.
  if (wait > 2) setTimeout(pump, wait - 1.5);
  else setImmediate(pump);
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

let finished = false;
function finish(): void {
  if (finished) return;
  finished = true;
  const lat = latencies.slice(0, recorded).sort();
  const lag = lags.slice(0, lagged).sort();
  const windowStart = t0 + warmupCount * intervalMs;
  const windowSeconds = Math.max(config.seconds, (lastEnd - windowStart) / 1000);
  const round3 = (n: number): number => Math.round(n * 1000) / 1000;
  let sum = 0;
  for (const v of lat) sum += v;
  const report = {
    scheduled: measuredCount,
    completed: recorded,
    rate: config.rate,
    durationSeconds: round3(windowSeconds),
    requestsPerSecond: round3(recorded / windowSeconds),
    latencyMs: {
      avg: round3(recorded ? sum / recorded : 0),
      p50: round3(percentile(lat, 50)),
      p75: round3(percentile(lat, 75)),
      p90: round3(percentile(lat, 90)),
      p99: round3(percentile(lat, 99)),
      p999: round3(percentile(lat, 99.9)),
      max: round3(lat.length ? lat[lat.length - 1]! : 0),
    },
    lagMs: { p50: round3(percentile(lag, 50)), p99: round3(percentile(lag, 99)), max: round3(lag.length ? lag[lag.length - 1]! : 0) },
    statuses,
    errors,
    firstError,
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
  agent.destroy();
  process.exit(0);
}

// Safety net: whatever is still unanswered long after the last request was due counts as timed out.
const deadline = (config.warmupSeconds + config.seconds) * 1000 + config.timeoutMs + 5000;
setTimeout(() => {
  if (outstanding > 0) fail('timeout', `${outstanding} request(s) still unanswered at the end`);
  finish();
}, deadline).unref();

t0 = performance.now() + 20;
setTimeout(pump, 20);
