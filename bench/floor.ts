/**
 * The `floor` scenario: what this machine allows for the two goals of the `messages` and `fanout`
 * scenarios that no build of the node has met, measured with no chat code at all. A goal below
 * its floor cannot be met by any server here; the figures say how far each goal is from it.
 *
 * 1. Sends (messages goal: node >= 0.35 x bare POST). Measured in one run, both pinned to the
 *    target CPU as the node is:
 *    - the bare uWS server answering the messages scenario's POST (757 bytes), under wrk
 *      (one thread, BENCH_CONNECTIONS or 64 connections, pinned to the load CPU): its CPU per
 *      request is the HTTP and kernel work every send also pays;
 *    - the durable append floor (bench/floor-store-proc.ts): better-sqlite3 alone writing the
 *      node's message rows (WAL, synchronous=FULL) in transactions of 64 rows, the largest group
 *      commit 64 connections can fill, in the bench's temp dir (the messages scenario's disk).
 *    For comparison only, the node's own store (SqliteChatStore.messages.append, inline) on the
 *    same rows: append_service_cpu_us, what the store adds to a row.
 *    send_ratio_ceiling = bare CPU per request / (bare CPU per request + append CPU per row): the
 *    ratio of a node that did nothing but the bare server's work and one durable row per send
 *    (no token, validation, actor, event, JSON). The goal is met only if this is above 0.35.
 * 2. Fanout (fanout goal: send-to-receive p99 < 50 ms for 10,000 streams of one message): the
 *    C program bench/floor/fanout-floor.c (compiled here with cc), one send() of an SSE-sized
 *    frame per connection per message, sender pinned to the target CPU, receiver to the load
 *    CPU, at the fanout scenario's rate: latency p50/p99/max over every event, as the fanout
 *    scenario measures it.
 *
 * Settings: BENCH_SECONDS (10); BENCH_FANOUT_CONNECTIONS (10,000), BENCH_FANOUT_RATE (10),
 * BENCH_FLOOR_FRAME_BYTES (700: an SSE `message.created` frame of the fanout scenario with its
 * id line is 650-750 bytes). Reproduce: `npm run bench -- floor` (about 40 s).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { envReader } from '../src/config/env-reader.ts';
import { CpuMeter } from './fanout-proc.ts';
import { startBare } from './lib/bare.ts';
import { BenchError } from './lib/errors.ts';
import { cpuPinning, pinnedCommand, REPO_ROOT } from './lib/processes.ts';
import { goal, type Scenario } from './lib/scenario.ts';
import { ensureWrk, runWrk } from './lib/wrk.ts';

/** The goals of the messages and fanout scenarios these floors are set against. */
const GOALS = { sendRatio: 0.35, fanoutP99Ms: 50 };
/** The largest group commit 64 connections can fill: one send in flight per connection. */
const FLOOR_BATCH = 64;

interface StoreFloor {
  shape: string;
  batch: number;
  rows: number;
  cpu_us_per_row: number;
  rows_per_second: number;
}

interface FanoutFloor {
  connections: number;
  events: number;
  lost: number;
  send_failures: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  loop_ms_mean: number;
  loop_ms_max: number;
  sender_cpu_us_per_event: number;
}

function lastJsonLine<T>(what: string, out: string): T {
  const line = out.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(line) as T;
  } catch {
    throw new BenchError(`floor: ${what} printed no result:\n${out.slice(0, 2000)}`);
  }
}

function storeFloor(dir: string, seconds: number, shape: 'minimal' | 'row' | 'service'): StoreFloor {
  const [cmd, args] = pinnedCommand('target', process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'bench/floor-store-proc.ts'), dir, String(seconds), String(FLOOR_BATCH), shape]);
  return lastJsonLine(`the ${shape} store floor`, execFileSync(cmd, args, { cwd: REPO_ROOT, encoding: 'utf8' }));
}

function fanoutFloor(dir: string, connections: number, rate: number, seconds: number, frameBytes: number): FanoutFloor {
  const exe = path.join(dir, 'fanout-floor');
  try {
    execFileSync('cc', ['-O2', '-o', exe, path.join(REPO_ROOT, 'bench/floor/fanout-floor.c')], { stdio: 'pipe' });
  } catch (err) {
    throw new BenchError(`floor: cannot compile bench/floor/fanout-floor.c with cc (apt-get install gcc): ${String((err as Error).message).split('\n')[0]}`);
  }
  const pins = cpuPinning();
  const args = [String(connections), String(rate), '3', String(seconds), String(frameBytes), pins?.target.split('-')[0] ?? '-1', pins?.load ?? '-1'];
  return lastJsonLine('the fanout floor', execFileSync(exe, args, { encoding: 'utf8', timeout: (seconds + 30) * 1000 }));
}

export const scenario: Scenario = {
  name: 'floor',
  description: `what this machine allows with no chat code: the send ratio a node doing only the bare server's work plus one durable SQLite row per send could reach (goal ${GOALS.sendRatio}), and the p99 of one message to N loopback streams sent by a C loop (goal ${GOALS.fanoutP99Ms} ms)`,
  async run(settings, log) {
    const problems: string[] = [];
    const { int } = envReader(process.env, problems);
    const connections = int('BENCH_FANOUT_CONNECTIONS', 10_000, 1, 100_000);
    const rate = int('BENCH_FANOUT_RATE', 10, 1, 1000);
    const frameBytes = int('BENCH_FLOOR_FRAME_BYTES', 700, 64, 65_536);
    const wrkConnections = int('BENCH_CONNECTIONS', 64, 1, 10_000);
    if (problems.length) throw new BenchError(problems.join('\n'));
    ensureWrk();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-floor-'));
    try {
      // 1a. The bare POST, as in the messages scenario (same answer size, same request body size).
      const bare = await startBare('bare-post', Buffer.from('x'.repeat(757)));
      let bareRps: number;
      let bareCpuShare: number;
      try {
        const target = { url: `${bare.baseUrl}/api/v1/tenants/acme/applications/support/conversations/c/messages`, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ body: 'x'.repeat(170), actor_user_id: 'alice' }) };
        log(`warming up the bare POST (${settings.warmupSeconds}s)`);
        if (settings.warmupSeconds > 0) await runWrk({ ...target, connections: wrkConnections, seconds: settings.warmupSeconds });
        log(`measuring the bare POST (${settings.seconds}s, ${wrkConnections} connections)`);
        const meter = new CpuMeter(bare.process.child.pid!);
        meter.start();
        const r = await runWrk({ ...target, connections: wrkConnections, seconds: settings.seconds });
        bareCpuShare = meter.read().total;
        if (!(bareCpuShare > 0)) throw new BenchError('floor: cannot read the bare server\'s CPU time from /proc');
        bareRps = r.requestsPerSecond;
        if (r.non2xx > 0) throw new BenchError('floor: the bare server answered errors');
      } finally {
        await bare.process.stop();
      }
      // The bare server's own CPU per request (it is not always at 100% of its core).
      const bareUs = (1e6 * bareCpuShare) / bareRps;
      log(`  bare POST: ${Math.round(bareRps)} req/s at ${Math.round(bareCpuShare * 100)}% of its CPU: ${bareUs.toFixed(2)} us per request`);

      // 1b. The durable append floor, both shapes.
      log(`measuring the durable append floor (better-sqlite3, WAL, synchronous=FULL, ${FLOOR_BATCH} rows per commit, ${settings.seconds}s per shape)`);
      const row = storeFloor(dir, settings.seconds, 'row');
      const minimal = storeFloor(dir, settings.seconds, 'minimal');
      const best = Math.min(row.cpu_us_per_row, minimal.cpu_us_per_row);
      log(`  node's row: ${row.cpu_us_per_row} us per row (${row.rows_per_second} rows/s); minimal row: ${minimal.cpu_us_per_row} us per row (${minimal.rows_per_second} rows/s)`);
      // Not a floor: the node's own store appending the same rows, to show what it adds to one.
      const service = storeFloor(dir, settings.seconds, 'service');
      log(`  for comparison, the node's store (messages.append, inline): ${service.cpu_us_per_row} us per append (${service.rows_per_second} appends/s)`);
      const ceiling = Math.round((bareUs / (bareUs + best)) * 1000) / 1000;
      log(`  send ratio ceiling: ${bareUs.toFixed(2)} / (${bareUs.toFixed(2)} + ${best}) = ${ceiling}`);

      // 2. The fanout floor.
      log(`measuring the fanout floor (C, ${connections} loopback connections, ${rate} msgs/s, ${frameBytes}-byte frames, ${settings.seconds}s after 3s)`);
      const fan = fanoutFloor(dir, connections, rate, settings.seconds, frameBytes);
      log(`  p50 ${fan.p50_ms} ms, p99 ${fan.p99_ms} ms, max ${fan.max_ms} ms; the sender's loop per message ${fan.loop_ms_mean} ms (max ${fan.loop_ms_max}), ${fan.sender_cpu_us_per_event} us of its CPU per event; lost ${fan.lost}`);
      if (fan.lost > 0 || fan.send_failures > 0) throw new BenchError(`floor: the fanout floor lost ${fan.lost} events (${fan.send_failures} short sends): the machine is too loaded to measure`);

      const round2 = (n: number): number => Math.round(n * 100) / 100;
      return {
        measurements: [],
        figures: {
          bare_post_rps: Math.round(bareRps),
          bare_post_cpu_us: round2(bareUs),
          append_row_cpu_us: row.cpu_us_per_row,
          append_minimal_cpu_us: minimal.cpu_us_per_row,
          append_batch: FLOOR_BATCH,
          append_service_cpu_us: service.cpu_us_per_row,
          send_ratio_ceiling: ceiling,
          fanout_connections: fan.connections,
          fanout_floor_p50_ms: fan.p50_ms,
          fanout_floor_p99_ms: fan.p99_ms,
          fanout_floor_max_ms: fan.max_ms,
          fanout_floor_loop_ms: fan.loop_ms_mean,
          fanout_floor_cpu_us_per_event: fan.sender_cpu_us_per_event,
        },
        // Not goals of this scenario: where the other scenarios' goals stand against the floors.
        goals: [goal('send_ratio_ceiling', ceiling, '>=', GOALS.sendRatio), goal('fanout_floor_p99_ms', fan.p99_ms, '<=', GOALS.fanoutP99Ms)],
        notes: [
          `send_ratio_ceiling = bare_post_cpu_us / (bare_post_cpu_us + the cheaper append): a node doing only the bare server's HTTP work and one durable row per send, nothing else; compare with the messages goal ${GOALS.sendRatio}`,
          `append_*_cpu_us: better-sqlite3 alone on the target CPU, WAL + synchronous=FULL, ${FLOOR_BATCH} rows per COMMIT, UUIDv7 ids over 200 conversations; row = the node's messages table, minimal = (conversation_id, seq) clustered + an id index; service = the node's own store (messages.append, inline), for comparison only`,
          `fanout_floor_*: bench/floor/fanout-floor.c, one send() per connection per message back to back, sender on the target CPU, receiver on the load CPU; compare with the fanout goal p99 < ${GOALS.fanoutP99Ms} ms`,
          'a "PASS" here means the other scenario\'s goal is above the machine\'s floor (reachable in principle), a "MISS" that no server could meet it on this machine',
        ],
      };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
