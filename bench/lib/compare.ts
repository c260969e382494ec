/**
 * Measures targets against each other under identical wrk settings: each is checked once, warmed
 * up, then measured once per round, the order alternating between rounds so neither side always
 * runs on a hotter (or more throttled) machine.
 */
import { cpuSeconds } from '../fanout-proc.ts';
import { BenchError } from './errors.ts';
import type { BenchSettings, Measurement } from './scenario.ts';
import { runWrk, type HttpTarget, type WrkResult } from './wrk.ts';

export interface NamedTarget extends HttpTarget {
  name: string;
  /** The serving process: its CPU time over each measured round is recorded (Linux /proc). */
  pid?: number;
}

/** One request through fetch: must answer 2xx without redirect (wrk would not count a 3xx as an error). Returns the body bytes. */
export async function checkOnce(target: NamedTarget): Promise<Buffer> {
  const res = await fetch(target.url, {
    method: target.method ?? 'GET',
    headers: target.headers,
    body: target.body,
    redirect: 'manual',
    signal: AbortSignal.timeout(10_000),
  });
  const body = Buffer.from(await res.arrayBuffer());
  if (res.status < 200 || res.status > 299) {
    throw new BenchError(`${target.name}: ${target.method ?? 'GET'} ${target.url} answered ${res.status}, not 2xx:\n${body.toString('utf8').slice(0, 2000)}`);
  }
  return body;
}

/** Seconds the comparison will take (warm-up plus rounds), for callers working against a deadline. */
export function plannedSeconds(targets: number, s: BenchSettings): number {
  return targets * (s.warmupSeconds + s.rounds * s.seconds);
}

export async function compareTargets(targets: NamedTarget[], s: BenchSettings, log: (line: string) => void): Promise<Measurement[]> {
  for (const t of targets) await checkOnce(t);
  const load = (t: NamedTarget, seconds: number): Promise<WrkResult> => runWrk({ ...t, seconds, connections: s.connections });
  if (s.warmupSeconds > 0) {
    for (const t of targets) {
      log(`warming up ${t.name} (${s.warmupSeconds}s)`);
      await load(t, s.warmupSeconds);
    }
  }
  const measurements: Measurement[] = [];
  for (let round = 1; round <= s.rounds; round += 1) {
    const order = round % 2 === 1 ? targets : [...targets].reverse();
    for (const t of order) {
      log(`measuring ${t.name}, round ${round}/${s.rounds} (${s.seconds}s, ${s.connections} connections)`);
      const before = t.pid === undefined ? null : cpuSeconds(t.pid);
      const wrk = await load(t, s.seconds);
      const after = t.pid === undefined ? null : cpuSeconds(t.pid);
      // CPU per request is what a shared machine distorts least (throughput moves with every neighbour).
      const cpu = before && after && before.user >= 0 && after.user >= 0 ? after.user + after.system - before.user - before.system : undefined;
      const perReq = cpu === undefined ? '' : `, ${((cpu / wrk.requests) * 1e6).toFixed(2)} µs CPU per request`;
      log(`  ${t.name}: ${Math.round(wrk.requestsPerSecond)} req/s, p99 ${wrk.latencyMs.p99.toFixed(2)} ms${perReq}`);
      measurements.push(cpu === undefined ? { target: t.name, round, wrk } : { target: t.name, round, wrk, cpuSeconds: cpu });
    }
  }
  return measurements;
}

export interface Summary {
  requestsPerSecond: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  /** Server CPU (user + system) per request over all rounds, when every round recorded it. */
  cpuUsPerRequest: number | null;
}

/** One target over all rounds: total requests over total time; percentiles averaged over rounds. */
export function summarize(measurements: Measurement[], target: string): Summary {
  const mine = measurements.filter((m) => m.target === target);
  if (mine.length === 0) throw new BenchError(`no measurement for ${target}`);
  const mean = (f: (r: WrkResult) => number): number => mine.reduce((sum, m) => sum + f(m.wrk), 0) / mine.length;
  // wrk prints the duration rounded to 10 ms; requests / (its req/s) is the exact one.
  const requests = mine.reduce((sum, m) => sum + m.wrk.requests, 0);
  const seconds = mine.reduce((sum, m) => sum + m.wrk.requests / m.wrk.requestsPerSecond, 0);
  const cpu = mine.every((m) => m.cpuSeconds !== undefined) ? mine.reduce((sum, m) => sum + (m.cpuSeconds as number), 0) : null;
  return {
    requestsPerSecond: requests / seconds,
    p50Ms: mean((r) => r.latencyMs.p50),
    p90Ms: mean((r) => r.latencyMs.p90),
    p99Ms: mean((r) => r.latencyMs.p99),
    cpuUsPerRequest: cpu === null ? null : (cpu / requests) * 1e6,
  };
}

/** Figures for a node-versus-baseline pair, flat for the JSON line. */
export function pairFigures(measurements: Measurement[], subject: string, baseline: string): Record<string, number> {
  const a = summarize(measurements, subject);
  const b = summarize(measurements, baseline);
  const round2 = (n: number): number => Math.round(n * 100) / 100;
  const cpu: Record<string, number> = {};
  if (a.cpuUsPerRequest !== null) cpu[`${subject}_cpu_us_per_req`] = round2(a.cpuUsPerRequest);
  if (b.cpuUsPerRequest !== null) cpu[`${baseline}_cpu_us_per_req`] = round2(b.cpuUsPerRequest);
  return Object.assign({
    [`${subject}_rps`]: Math.round(a.requestsPerSecond),
    [`${subject}_p50_ms`]: round2(a.p50Ms),
    [`${subject}_p90_ms`]: round2(a.p90Ms),
    [`${subject}_p99_ms`]: round2(a.p99Ms),
    [`${baseline}_rps`]: Math.round(b.requestsPerSecond),
    [`${baseline}_p50_ms`]: round2(b.p50Ms),
    [`${baseline}_p90_ms`]: round2(b.p90Ms),
    [`${baseline}_p99_ms`]: round2(b.p99Ms),
    ratio: Math.round((a.requestsPerSecond / b.requestsPerSecond) * 1000) / 1000,
  }, cpu);
}
