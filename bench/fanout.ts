/**
 * The `fanout` scenario: one node holding BENCH_FANOUT_CONNECTIONS (10,000) SSE streams that all
 * follow one CHANNEL conversation, while messages are sent to it at a steady rate.
 *
 * Setup: a real node (the esbuild bundle, embedded IdP, temp data dir, rate limits out of reach,
 * realtime credentials living as long as the user tokens allow) pinned to the target CPU; a CHANNEL
 * of the five demo users with access to `support`, created by the machine client; one realtime
 * credential per user, each opened by a fifth of the connections. The connections are raw sockets
 * held by one lean client process pinned to the load CPU (bench/lib/sse-clients.ts).
 *
 * Measured:
 *  - node RSS before any stream, and after every stream is open and idle: KB per idle connection;
 *  - per step (BENCH_FANOUT_RATE msgs/s, default 10, so 10,000 receivers get 100,000 events/s,
 *    then the rates of BENCH_FANOUT_STEPS, default 20,40): the bench runner POSTs messages on an
 *    open-loop schedule (machine on behalf of a member), each carrying its send time; every
 *    connection checks it got every message exactly once, and records receive time − send
 *    time. Reported: events delivered per second (all receivers), latency p50/p99/max, node CPU
 *    (from /proc/<pid>/stat) and so events per second per core, lost events.
 * Escalation stops early once a step misses events or its p99 passes a second.
 *
 * Goals (issue 4): p99 < 50 ms at the base rate, >= 100,000 events/s per core, < 8 KB per idle
 * connection.
 */
import { envReader } from '../src/config/env-reader.ts';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CpuMeter, MachineMeter, maxOpenFiles, rssKiB } from './fanout-proc.ts';
import { BASE, USERS, expectOk, sendSteady, type Api } from './fanout-sender.ts';
import { buildNode, nodeEnv } from './lib/chat-node.ts';
import { devUserToken } from './lib/dev-token.ts';
import { BenchError } from './lib/errors.ts';
import { devMachineToken } from './lib/machine-token.ts';
import { assertNotInterrupted, freePort, onExit, startTsx, type ManagedProcess } from './lib/processes.ts';
import { goal, type Measurement, type Scenario } from './lib/scenario.ts';
import { SseClients, type PhaseReport } from './lib/sse-clients.ts';

const GOALS = { p99Ms: 50, eventsPerCore: 100_000, idleKB: 8 };
/** Descriptors the node and the client need besides the connections. */
const SPARE_FILES = 512;
/** User tokens of the dev IdP live 10 minutes, and the credentials no longer. */
const CREDENTIAL_SECONDS = 600;

interface FanoutSettings {
  connections: number;
  rate: number;
  steps: number[];
}

function fanoutSettings(env: Record<string, string | undefined> = process.env): FanoutSettings {
  const problems: string[] = [];
  const { int } = envReader(env, problems);
  const connections = int('BENCH_FANOUT_CONNECTIONS', 10_000, 1, 100_000);
  const rate = int('BENCH_FANOUT_RATE', 10, 1, 1000);
  const rawSteps = env.BENCH_FANOUT_STEPS ?? '20,40';
  const steps = rawSteps === '' ? [] : rawSteps.split(',').map((s) => s.trim());
  if (!steps.every((s) => /^\d+$/.test(s) && Number(s) >= 1 && Number(s) <= 1000)) problems.push(`BENCH_FANOUT_STEPS must be a comma-separated list of rates from 1 to 1000 (got "${rawSteps}")`);
  if (problems.length) throw new BenchError(problems.join('\n'));
  return { connections, rate, steps: steps.map(Number) };
}

/**
 * Where the node's data directory goes: BENCH_FANOUT_DATA_DIR, else tmpfs (/dev/shm) when there is
 * one, else the temp dir. On tmpfs the store's fsyncs cost nothing, so the latency figures are the
 * node's send and fanout path and not the disk, which on a shared machine is other people's noise
 * (the `messages` scenario measures sends with the store on disk).
 */
function dataDirBase(): string {
  if (process.env.BENCH_FANOUT_DATA_DIR) return process.env.BENCH_FANOUT_DATA_DIR;
  return existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const round2 = (n: number): number => Math.round(n * 100) / 100;

interface Step {
  rate: number;
  report: PhaseReport;
  nodeCpu: number;
  /** The part of nodeCpu spent in the kernel (socket writes). */
  nodeSystem: number;
  /** Share of the time the node's event loop was runnable but other processes had the CPU. */
  nodeWaiting: number;
  clientCpu: number;
  /** Busy fraction of each CPU of the machine (all processes, softirq included). */
  cpus: number[];
  eventsPerSecond: number;
  lost: number;
}

export const scenario: Scenario = {
  name: 'fanout',
  description: `SSE streams on one node all following one CHANNEL, messages at a steady rate (goals: p99 < ${GOALS.p99Ms} ms, >= ${GOALS.eventsPerCore.toLocaleString('en-US')} events/s per core, < ${GOALS.idleKB} KB per idle connection)`,
  async run(settings, log) {
    const fan = fanoutSettings();
    const rates = [fan.rate, ...fan.steps];
    const planned = 60 + settings.warmupSeconds + rates.length * (settings.seconds + 10);
    if (planned > CREDENTIAL_SECONDS * 0.8) throw new BenchError(`fanout: ~${planned}s would outlive the 10-minute user tokens the credentials are capped by; lower BENCH_SECONDS or BENCH_FANOUT_STEPS`);

    const dataDir = mkdtempSync(path.join(dataDirBase(), 'bench-fanout-'));
    const removeDataDir = onExit(() => rmSync(dataDir, { recursive: true, force: true }));
    let node: ManagedProcess | undefined;
    let clients: SseClients | undefined;
    try {
      const port = await freePort();
      const origin = `http://127.0.0.1:${port}`;
      buildNode(log);
      log(`starting the chat node on ${origin} (data in ${dataDir})`);
      // Thousands of streams per credential (five users), and up to 10,000 on the node: no stream caps.
      const env = { ...nodeEnv(port, dataDir), CHAT_REALTIME_TOKEN_TTL_MS: '3600000', CHAT_REALTIME_MAX_STREAMS_PER_USER: '100000', CHAT_REALTIME_MAX_STREAMS: '1000000' };
      const profile = process.env.BENCH_FANOUT_CPU_PROFILE;
      if (profile) log(`the node runs under the CPU profiler; the profile goes to ${profile}`);
      const file = profile ? 'bench/fanout-profiled-node.ts' : 'dist/main.mjs';
      node = await startTsx({ name: 'chat-node', file, env, readyUrl: `${origin}/readyz`, timeoutMs: 60_000 });
      const nodePid = node.child.pid!;
      const files = maxOpenFiles(nodePid);
      if (files !== null && files < fan.connections + SPARE_FILES) {
        throw new BenchError(`fanout: the node may open ${files} files, too few for ${fan.connections} connections; raise the limit (ulimit -n ${fan.connections + SPARE_FILES * 2}) in the shell running the bench, or lower BENCH_FANOUT_CONNECTIONS`);
      }

      const machine = await devMachineToken({ idpBaseUrl: `${origin}/idp`, clientId: 'acme-support-backend', clientSecret: 'acme-support-backend-secret' });
      const api: Api = { origin, headers: { Authorization: `Bearer ${machine.token}` } };
      const channel = await expectOk(api, 'POST', `${BASE}/conversations`, { type: 'CHANNEL', name: 'fanout bench', member_user_ids: USERS });
      const conversationId = channel.conversation_id as string;
      log(`CHANNEL ${conversationId} of ${USERS.join(', ')}`);

      const paths: string[] = [];
      let credentialsExpire = Number.POSITIVE_INFINITY;
      for (const user of USERS) {
        const access = await devUserToken({ idpBaseUrl: `${origin}/idp`, userId: user, clientId: 'acme-support-web', clientSecret: 'acme-support-web-secret' });
        const cred = await expectOk({ origin, headers: { Authorization: `Bearer ${access.token}` } }, 'GET', `${BASE}/notifications/realtime-token`);
        const url = new URL(cred.stream_url as string);
        paths.push(url.pathname + url.search);
        credentialsExpire = Math.min(credentialsExpire, cred.expires as number);
      }
      if (Date.now() + planned * 1000 > credentialsExpire) {
        throw new BenchError(`fanout: the stream credentials expire in ${Math.round((credentialsExpire - Date.now()) / 1000)}s, before the ~${planned}s run would end`);
      }

      // The send path warmed up (JIT) before any stream exists; nobody receives these.
      let seq = 0;
      seq = (await sendSteady(api, conversationId, seq, 50, 1)).untilSeq;
      await sleep(1000);
      const rssBefore = rssKiB(nodePid);

      clients = await SseClients.start(fan.connections + SPARE_FILES);
      const clientPid = clients.pid;
      log(`opening ${fan.connections} streams (${USERS.length} credentials, one client process, pid ${clientPid})`);
      const connected = await clients.connect({ host: '127.0.0.1', port, paths, connections: fan.connections });
      if (connected.ready !== fan.connections) {
        throw new BenchError(`fanout: ${connected.ready} of ${fan.connections} streams opened (${connected.failed} failed; first error: ${connected.firstError})`);
      }
      log(`${connected.ready} streams open after ${connected.seconds.toFixed(1)}s; idle for 3s`);
      await sleep(3000);
      const rssIdle = rssKiB(nodePid);
      const perConnectionKB = ((rssIdle - rssBefore) * 1024) / 1000 / fan.connections;
      log(`node RSS ${(rssBefore / 1024).toFixed(1)} MiB before, ${(rssIdle / 1024).toFixed(1)} MiB with ${fan.connections} idle streams: ${perConnectionKB.toFixed(2)} KB each`);

      const nodeCpu = new CpuMeter(nodePid);
      const clientCpu = new CpuMeter(clientPid);
      const cpuMeter = new MachineMeter();
      const phase = async (rate: number, seconds: number): Promise<Step> => {
        assertNotInterrupted();
        const fromSeq = seq;
        await clients!.start(fromSeq, Math.round(rate * seconds));
        nodeCpu.start();
        clientCpu.start();
        cpuMeter.start();
        const sent = await sendSteady(api, conversationId, fromSeq, rate, seconds);
        const nodeShare = nodeCpu.read();
        const clientShare = clientCpu.read();
        const cpus = cpuMeter.read();
        seq = sent.untilSeq;
        const report = await clients!.stop(sent.seconds, 5000);
        const lost = report.missing + report.duplicates;
        if (process.env.BENCH_VERBOSE === '1') log(`  report: ${JSON.stringify(report)}`);
        if (sent.lagMsMax > 20) log(`  (the sender fired up to ${sent.lagMsMax.toFixed(0)} ms late: the runner was short of CPU)`);
        log(`  sends answered in ${sent.postMs.p50.toFixed(1)} ms (p50), ${sent.postMs.max.toFixed(1)} ms (max); first receiver after ${report.latencyMs.min.toFixed(1)} ms at best`);
        return { rate, report, nodeCpu: nodeShare.total, nodeSystem: nodeShare.system, nodeWaiting: nodeShare.waiting, clientCpu: clientShare.total, cpus, eventsPerSecond: report.events / sent.seconds, lost };
      };

      if (settings.warmupSeconds > 0) {
        log(`warming up at ${fan.rate} msgs/s (${settings.warmupSeconds}s, not recorded)`);
        await phase(fan.rate, settings.warmupSeconds);
      }
      const steps: Step[] = [];
      for (const rate of rates) {
        log(`measuring ${rate} msgs/s to ${fan.connections} streams (${(rate * fan.connections).toLocaleString('en-US')} events/s offered, ${settings.seconds}s)`);
        const step = await phase(rate, settings.seconds);
        const r = step.report;
        steps.push(step);
        log(
          `  ${Math.round(step.eventsPerSecond).toLocaleString('en-US')} events/s, p50 ${r.latencyMs.p50.toFixed(2)} ms, p99 ${r.latencyMs.p99.toFixed(2)} ms, max ${r.latencyMs.max.toFixed(2)} ms; node CPU ${(step.nodeCpu * 100).toFixed(0)}% (kernel ${(step.nodeSystem * 100).toFixed(0)}%, waited for the CPU ${(step.nodeWaiting * 100).toFixed(0)}% of the time), clients CPU ${(step.clientCpu * 100).toFixed(0)}% (CPUs busy: ${step.cpus.map((c) => `${Math.round(c * 100)}%`).join(' ')}); lost ${step.lost} (${r.connectionsShort} connections short, ${r.closedByServer} closed by the node)`,
        );
        if (step.lost > 0 || r.closedByServer > 0 || r.latencyMs.p99 > 1000) {
          log('  stopping the escalation here');
          break;
        }
      }
      const rssAfter = rssKiB(nodePid);

      const base = steps[0]!;
      // Events per core from the busiest step that lost nothing: the least extrapolated figure.
      const clean = steps.filter((s) => s.lost === 0 && s.report.closedByServer === 0);
      const busiest = clean.length ? clean[clean.length - 1]! : base;
      const perCore = busiest.nodeCpu > 0 ? busiest.eventsPerSecond / Math.min(1, busiest.nodeCpu) : 0;
      const figures: Record<string, number> = {
        connections: fan.connections,
        connect_seconds: round2(connected.seconds),
        rss_before_mb: round2(rssBefore / 1024),
        rss_idle_mb: round2(rssIdle / 1024),
        rss_after_mb: round2(rssAfter / 1024),
        kb_per_idle_conn: round2(perConnectionKB),
        rate: base.rate,
        events_per_s: Math.round(base.eventsPerSecond),
        p50_ms: round2(base.report.latencyMs.p50),
        p99_ms: round2(base.report.latencyMs.p99),
        max_ms: round2(base.report.latencyMs.max),
        node_cpu_pct: Math.round(base.nodeCpu * 100),
        node_cpu_wait_pct: Math.round(base.nodeWaiting * 100),
        lost_events: base.lost,
        lost_events_all_steps: steps.reduce((n, s) => n + s.lost, 0),
        closed_by_node: steps[steps.length - 1]!.report.closedByServer,
        events_per_core: Math.round(perCore),
      };
      for (const s of steps.slice(1)) {
        figures[`r${s.rate}_events_per_s`] = Math.round(s.eventsPerSecond);
        figures[`r${s.rate}_p99_ms`] = round2(s.report.latencyMs.p99);
        figures[`r${s.rate}_max_ms`] = round2(s.report.latencyMs.max);
        figures[`r${s.rate}_node_cpu_pct`] = Math.round(s.nodeCpu * 100);
        figures[`r${s.rate}_node_cpu_wait_pct`] = Math.round(s.nodeWaiting * 100);
        figures[`r${s.rate}_lost`] = s.lost;
      }
      figures.client_cpu_pct_max = Math.round(Math.max(...steps.map((s) => s.clientCpu)) * 100);

      const measurements: Measurement[] = steps.map((s) => ({
        target: `${s.rate}/s x ${fan.connections}`,
        round: 1,
        wrk: {
          requests: s.report.events,
          durationSeconds: s.report.sendSeconds,
          requestsPerSecond: s.eventsPerSecond,
          latencyMs: { avg: s.report.latencyMs.avg, max: s.report.latencyMs.max, p50: s.report.latencyMs.p50, p75: s.report.latencyMs.p75, p90: s.report.latencyMs.p90, p99: s.report.latencyMs.p99 },
          non2xx: 0,
          socketErrors: { connect: 0, read: 0, write: 0, timeout: 0 },
        },
      }));
      return {
        measurements,
        figures,
        goals: [
          goal('p99_ms', figures.p99_ms!, '<=', GOALS.p99Ms),
          goal('events_per_core', figures.events_per_core!, '>=', GOALS.eventsPerCore),
          goal('kb_per_idle_conn', figures.kb_per_idle_conn!, '<=', GOALS.idleKB),
          goal('lost_events', figures.lost_events!, '<=', 0),
        ],
        notes: [
          `rows: msgs/s x streams; req/s = events delivered per second over all streams; latency = receive time - send time stamped in the text (same clock), over every event of every stream`,
          `events_per_core = events/s / node CPU share, from the busiest step without losses (${busiest.rate} msgs/s, node at ${Math.round(busiest.nodeCpu * 100)}% of a core)`,
          `kb_per_idle_conn = (node RSS with ${fan.connections} idle streams - before) / ${fan.connections}, 1 KB = 1000 bytes`,
          `lost_events counts events a stream lacked after a 5 s drain, plus duplicates: every stream is checked for every message of every step, exactly once`,
          `node pinned to CPU 0, the client process (raw sockets) to CPU 1, on ${os.availableParallelism()} CPUs; node_cpu_wait_pct: share of the step the node's event loop was runnable but another process had its CPU (/proc/<pid>/schedstat): above a few % the latency figures describe the machine's load, not the node`,
        ],
      };
    } finally {
      await clients?.close();
      await node?.stop();
      removeDataDir();
    }
  },
};
