/**
 * Fixed-rate (open-loop) latency runs, the part of wrk2 the harness needs (wrk2 is not packaged
 * here): requests start on a fixed schedule and latency counts from each request's scheduled start,
 * so a stalled server is charged for every request it delayed (no coordinated omission).
 *
 * The generator is bench/lib/fixed-rate-worker.ts, run as its own process pinned to the load CPU
 * as wrk is. A run that saw a non-2xx status, a socket error, a timeout, or fewer answers than it
 * scheduled throws: its percentiles would not describe the server.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BenchError } from './errors.ts';
import { assertNotInterrupted, onExit, pinnedCommand, REPO_ROOT, track } from './processes.ts';
import type { WrkResult } from './wrk.ts';
import type { MixRequest } from './wrk-script.ts';

export interface FixedRateOptions {
  /** Origin of the target, e.g. http://127.0.0.1:8080; paths come from the mix. */
  origin: string;
  requests: MixRequest[];
  /** Requests started per second. */
  rate: number;
  /** Measured seconds (after the warm-up). */
  seconds: number;
  /** Seconds on the same schedule before recording starts (JIT, connections). Default 1. */
  warmupSeconds?: number;
  /** Keep-alive connections at most (requests beyond wait in FIFO order, and their wait counts). Default 64. */
  connections?: number;
  timeoutMs?: number;
  seed?: number;
}

/** What the worker prints. */
export interface FixedRateReport {
  scheduled: number;
  completed: number;
  rate: number;
  durationSeconds: number;
  requestsPerSecond: number;
  latencyMs: { avg: number; p50: number; p75: number; p90: number; p99: number; p999: number; max: number };
  /** How late the generator itself started requests (its own timer and CPU), for judging the figures. */
  lagMs: { p50: number; p99: number; max: number };
  statuses: Record<string, number>;
  errors: Record<string, number>;
  firstError: string | null;
}

export interface FixedRateResult {
  report: FixedRateReport;
  /** The same figures in wrk's shape, for the report tables and summaries. */
  wrk: WrkResult;
}

const WORKER = path.join(REPO_ROOT, 'bench/lib/fixed-rate-worker.ts');

export async function runFixedRate(options: FixedRateOptions): Promise<FixedRateResult> {
  assertNotInterrupted();
  if (!(options.rate > 0)) throw new BenchError(`fixed-rate: the rate must be positive (got ${options.rate})`);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-fixed-rate-'));
  const removeDir = onExit(() => rmSync(dir, { recursive: true, force: true }));
  const warmupSeconds = options.warmupSeconds ?? 1;
  const timeoutMs = options.timeoutMs ?? 5000;
  try {
    const configFile = path.join(dir, 'config.json');
    const config = {
      origin: options.origin,
      requests: options.requests,
      rate: options.rate,
      seconds: options.seconds,
      warmupSeconds,
      connections: options.connections ?? 64,
      timeoutMs,
      seed: options.seed ?? 42,
    };
    await writeFile(configFile, JSON.stringify(config));
    const limitMs = (warmupSeconds + options.seconds) * 1000 + timeoutMs + 30_000;
    const { code, stdout, stderr } = await run(['--import', 'tsx', WORKER, configFile], limitMs);
    assertNotInterrupted();
    const last = stdout.trim().split('\n').pop() ?? '';
    let report: FixedRateReport;
    try {
      report = JSON.parse(last) as FixedRateReport;
    } catch {
      throw new BenchError(`fixed-rate generator failed (exit ${code}):\n${stderr || stdout}`);
    }
    const what = `fixed-rate ${options.rate}/s to ${options.origin}${options.requests[0]?.path ?? ''}`;
    const bad = Object.entries(report.statuses).filter(([s]) => !/^2\d\d$/.test(s));
    if (bad.length > 0) {
      throw new BenchError(`${what}: non-2xx responses ${bad.map(([s, n]) => `${s}: ${n}`).join(', ')} (first: ${report.firstError}); figures discarded`);
    }
    const errorCount = Object.values(report.errors).reduce((a, b) => a + b, 0);
    if (errorCount > 0 || report.completed < report.scheduled) {
      throw new BenchError(
        `${what}: ${report.completed} of ${report.scheduled} requests answered, errors ${JSON.stringify(report.errors)} (first: ${report.firstError}); figures discarded`,
      );
    }
    const l = report.latencyMs;
    const wrk: WrkResult = {
      requests: report.completed,
      durationSeconds: report.durationSeconds,
      requestsPerSecond: report.requestsPerSecond,
      latencyMs: { avg: l.avg, max: l.max, p50: l.p50, p75: l.p75, p90: l.p90, p99: l.p99 },
      non2xx: 0,
      socketErrors: { connect: 0, read: 0, write: 0, timeout: 0 },
    };
    return { report, wrk };
  } finally {
    removeDir();
  }
}

function run(args: string[], timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const [command, pinnedArgs] = pinnedCommand('load', process.execPath, args);
    const child = spawn(command, pinnedArgs, { cwd: REPO_ROOT, env: { PATH: process.env.PATH }, stdio: ['ignore', 'pipe', 'pipe'] });
    track(child);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new BenchError(`fixed-rate generator could not start: ${err.message}`));
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
