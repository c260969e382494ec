/**
 * The `groupchat` scenario (issue 16): G GROUP conversations of U members each (default 10 x 10),
 * every member on its own SSE stream, messages at a fixed total rate from random members, and a
 * search for the highest rate the target sustains with p99 send-to-delivery under 100 ms and
 * nothing lost.
 *
 *   npm run bench -- groupchat [--groups 10] [--members 10] [--cluster N] [--rates 600,1200]
 *
 * Target: one node (--cluster absent), or N nodes behind HAProxy with Redis (groupchat-target.ts).
 * World (groupchat-setup.ts): generated users, the conversations, and per member a user token, a
 * presence heartbeat, a web push device and a realtime stream. Load, both processes pinned to the
 * load CPU, apart from the target's:
 *  - the sender (bench/lib/post-worker.ts): raw keep-alive sockets, open loop; message `seq` goes
 *    to conversation groupOf(seq) from member senderOf(seq) with that member's token, carrying its
 *    scheduled send time;
 *  - the receivers (bench/lib/sse-client-worker.ts in groups mode): one raw socket per stream,
 *    each must get exactly the messages of its own conversation, the sender's own included,
 *    exactly once: latency = receive time - scheduled send time, over every delivery.
 *
 * A step runs one rate for --seconds; it passes when every send was answered 201, nothing was
 * lost, duplicated or misdelivered, and the delivery p99 is under --p99-ms. The search starts at
 * --start-rate, grows by half while steps pass, then bisects between the best pass and the first
 * failure down to 8%. A step that fails on its p99 alone is repeated once, and the rate passes
 * if the repeat does (both are listed). CPU per message (user + system time over the step, drain included): the
 * nodes from /proc, HAProxy from /proc, Redis from its own INFO cpu counters, and the two load
 * processes, so the generator's cost shows beside the target's. Figures are those of the
 * highest passing step. Last stdout line (run.ts): JSON with server_cpu_us_per_message,
 * max_sustained_msgs_per_s, p99_ms, lost, and redis_cpu_us_per_message for clusters.
 */
import os from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { CpuMeter } from './fanout-proc.ts';
import { BASE, type Api } from './fanout-sender.ts';
import { buildWorld, writeFixture, type World } from './groupchat-setup.ts';
import { dataBase, startCluster, startNode, type CpuSample, type Target } from './groupchat-target.ts';
import { BenchError } from './lib/errors.ts';
import { groupOf, type GroupchatPlan } from './lib/groupchat-plan.ts';
import { devMachineToken } from './lib/machine-token.ts';
import { Posters, type PostReport } from './lib/posters.ts';
import { assertNotInterrupted, cpuPinning, onExit } from './lib/processes.ts';
import { goal, type Measurement, type Scenario } from './lib/scenario.ts';
import { SseClients, type PhaseReport } from './lib/sse-clients.ts';

const USAGE = '[--groups G=10] [--members U=10] [--cluster N] [--rates R1,R2 (no search)] [--start-rate 300] [--max-rate 50000] [--p99-ms 100] [--seconds BENCH_SECONDS] [--connections 256 (most sender connections)] [--data disk|tmpfs] [--push-devices 1|0]';
const SEED = 16;
const BODY_BYTES = 200;
const PADDING = 'lorem ipsum dolor sit amet '.repeat(12);
/** Descriptors the receiver needs besides its streams. */
const SPARE_FILES = 256;
/** The search stops when the best pass and the first failure are this close. */
const RESOLUTION = 0.08;
const MAX_STEPS = 14;

interface Options {
  groups: number;
  members: number;
  cluster: number;
  rates: number[] | null;
  startRate: number;
  maxRate: number;
  p99Ms: number;
  seconds: number;
  connections: number;
  tmpfs: boolean;
  devices: boolean;
}

function parseOptions(args: string[], seconds: number): Options {
  const o: Options = { groups: 10, members: 10, cluster: 0, rates: null, startRate: 300, maxRate: 50_000, p99Ms: 100, seconds, connections: 256, tmpfs: false, devices: true };
  const int = (flag: string, v: string | undefined, min: number, max: number): number => {
    if (v === undefined || !/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw new BenchError(`groupchat: ${flag} takes an integer from ${min} to ${max} (got ${v ?? 'nothing'})\nflags: ${USAGE}`);
    return Number(v);
  };
  for (let i = 0; i < args.length; i++) {
    const flag = args[i]!;
    const v = args[i + 1]?.startsWith('--') ? undefined : args[i + 1];
    const value = (): string | undefined => {
      if (v !== undefined) i++;
      return v;
    };
    switch (flag) {
      case '--groups': o.groups = int(flag, value(), 1, 1000); break;
      case '--members': o.members = int(flag, value(), 2, 100); break;
      case '--cluster': o.cluster = int(flag, value(), 1, 20); break;
      case '--rates': {
        const raw = value() ?? '';
        o.rates = raw.split(',').map((r) => int(flag, r, 1, 1_000_000));
        break;
      }
      case '--start-rate': o.startRate = int(flag, value(), 1, 1_000_000); break;
      case '--max-rate': o.maxRate = int(flag, value(), 1, 1_000_000); break;
      case '--p99-ms': o.p99Ms = int(flag, value(), 1, 60_000); break;
      case '--seconds': o.seconds = int(flag, value(), 1, 120); break;
      case '--connections': o.connections = int(flag, value(), 1, 1000); break;
      case '--data': {
        const d = value();
        if (d !== 'disk' && d !== 'tmpfs') throw new BenchError(`groupchat: --data takes disk or tmpfs (got ${d ?? 'nothing'})`);
        o.tmpfs = d === 'tmpfs';
        break;
      }
      case '--push-devices': o.devices = int(flag, value(), 0, 1) === 1; break;
      default:
        throw new BenchError(`groupchat: unknown flag ${flag}\nflags: ${USAGE}`);
    }
  }
  return o;
}

interface Step {
  rate: number;
  sent: PostReport;
  received: PhaseReport;
  /** CPU seconds over the step (sends and drain). */
  cpu: CpuSample & { sender: number; receiver: number };
  seconds: number;
  lost: number;
  duplicated: number;
  pass: boolean;
  why: string;
}

const round2 = (n: number): number => Math.round(n * 100) / 100;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const us = (cpuSeconds: number, messages: number): number => (messages > 0 ? round2((cpuSeconds * 1e6) / messages) : 0);
/** Calls per command between two samples. */
function callsBetween(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const d: Record<string, number> = {};
  for (const [name, n] of Object.entries(after)) if (n - (before[name] ?? 0) > 0) d[name] = n - (before[name] ?? 0);
  return d;
}

/** The commands Redis ran most, per message sent: `xread 3.02, evalsha 1.7, ...`. */
function topCommands(calls: Record<string, number>, messages: number): string {
  return Object.entries(calls).sort((a, b) => b[1] - a[1]).slice(0, 8).map(([name, n]) => `${name} ${per(n, messages)}`).join(', ');
}

/** A count per message sent, to two decimals. */
const per = (count: number, messages: number): number => (messages > 0 ? round2(count / messages) : 0);

export const scenario: Scenario = {
  name: 'groupchat',
  description: 'GROUP conversations with every member on an SSE stream, messages from random members at fixed rates: the highest rate with delivery p99 under 100 ms and nothing lost, and the CPU per message of the node(s), HAProxy and Redis',
  usage: USAGE,
  async run(settings, log, args) {
    const o = parseOptions(args, settings.seconds);
    const plan: GroupchatPlan = { groups: o.groups, members: o.members, seed: SEED };
    const streams = o.groups * o.members;
    const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-groupchat-fixture-'));
    const removeDir = onExit(() => rmSync(dir, { recursive: true, force: true }));
    let target: Target | undefined;
    let receivers: SseClients | undefined;
    let posters: Posters | undefined;
    try {
      const fixture = writeFixture(dir, o.groups, o.members);
      target = o.cluster > 0 ? await startCluster(o.cluster, fixture, log) : await startNode(fixture, dataBase(o.tmpfs), log);
      const t = target;
      const machine = await devMachineToken({ idpBaseUrl: t.idp, clientId: 'acme-support-backend', clientSecret: 'acme-support-backend-secret' });
      const api: Api = { origin: t.origin, headers: { Authorization: `Bearer ${machine.token}` } };
      log(`${o.groups} GROUP conversations of ${o.members} members; readying ${streams} members (token, heartbeat${o.devices ? ', push device' : ''}, stream credential)`);
      const world: World = await buildWorld(api, t.origin, t.idp, o.groups, o.members, o.devices);

      receivers = await SseClients.start(streams + SPARE_FILES);
      const paths = world.members.flat().map((m) => m.streamPath);
      const groupsOfStreams = world.members.flatMap((ms, g) => ms.map(() => g));
      const connected = await receivers.connect({ host: t.host, port: t.port, paths, connections: streams, groups: groupsOfStreams });
      if (connected.ready !== streams) throw new BenchError(`groupchat: ${connected.ready} of ${streams} streams opened (${connected.failed} failed; first error: ${connected.firstError})`);
      posters = await Posters.start({
        host: t.host,
        port: t.port,
        connections: o.connections,
        plan,
        basePath: BASE,
        conversations: world.conversations,
        tokens: world.members.map((ms) => ms.map((m) => m.token)),
        bodyBytes: BODY_BYTES,
        padding: PADDING,
      });
      log(`${streams} streams open; sender (pid ${posters.pid}) and receivers (pid ${receivers.pid}) on the load CPU`);

      const senderCpu = new CpuMeter(posters.pid);
      const receiverCpu = new CpuMeter(receivers.pid);
      let seq = 0;
      const step = async (rate: number, seconds: number): Promise<Step> => {
        assertNotInterrupted();
        const count = Math.round(rate * seconds);
        const seqGroups = Array.from({ length: count }, (_, k) => groupOf(plan, seq + k));
        await receivers!.start(seq, count, seqGroups);
        const before = await t.sample();
        senderCpu.start();
        receiverCpu.start();
        const started = performance.now();
        const sent = await posters!.run(seq, rate, seconds, 15_000);
        const received = await receivers!.stop(sent.sendSeconds, 5000);
        const elapsed = (performance.now() - started) / 1000;
        const after = await t.sample();
        const sender = senderCpu.read().total * elapsed;
        const receiver = receiverCpu.read().total * elapsed;
        seq += count;
        const lost = received.missing;
        const duplicated = received.duplicates;
        const bad = Object.entries(sent.statuses).filter(([s]) => s !== '201');
        const why =
          sent.answered < sent.scheduled ? `${sent.scheduled - sent.answered} sends unanswered (${sent.errors} sender errors, first: ${sent.firstError})`
          : bad.length > 0 ? `answers ${bad.map(([s, n]) => `${s} x${n}`).join(', ')} (first: ${sent.firstError})`
          : sent.errors > 0 ? `sender errors (${sent.firstError})`
          : lost > 0 || duplicated > 0 || received.misdelivered > 0 ? `${lost} lost, ${duplicated} duplicated, ${received.misdelivered} misdelivered`
          : received.closedByServer > 0 ? `${received.closedByServer} streams closed by the server`
          : received.latencyMs.p99 >= o.p99Ms ? `p99 ${received.latencyMs.p99.toFixed(1)} ms`
          : '';
        return {
          rate,
          sent,
          received,
          cpu: { nodes: after.nodes - before.nodes, nodesSystem: after.nodesSystem - before.nodesSystem, haproxy: after.haproxy - before.haproxy, redis: after.redis - before.redis, redisCommands: after.redisCommands - before.redisCommands, redisScripts: after.redisScripts - before.redisScripts, redisByCommand: callsBetween(before.redisByCommand, after.redisByCommand), sender, receiver },
          seconds: elapsed,
          lost,
          duplicated,
          pass: why === '',
          why,
        };
      };
      const describe = (s: Step): string => {
        const r = s.received;
        const m = s.sent.scheduled;
        const parts = [
          `${s.rate} msgs/s: ${Math.round(r.events / s.sent.sendSeconds).toLocaleString('en-US')} deliveries/s, p50 ${r.latencyMs.p50.toFixed(1)} / p99 ${r.latencyMs.p99.toFixed(1)} / max ${r.latencyMs.max.toFixed(1)} ms`,
          `sends answered p50 ${s.sent.latencyMs.p50.toFixed(1)} ms, generator lag p99 ${s.sent.lagMs.p99.toFixed(1)} ms`,
          `CPU per message: node${t.nodes > 1 ? 's' : ''} ${us(s.cpu.nodes, m)} µs (kernel ${us(s.cpu.nodesSystem, m)})${t.kind === 'cluster' ? `, haproxy ${us(s.cpu.haproxy, m)} µs, redis ${us(s.cpu.redis, m)} µs (${per(s.cpu.redisCommands, m)} commands, ${per(s.cpu.redisScripts, m)} scripts per message: ${topCommands(s.cpu.redisByCommand, m)})` : ''}, sender ${us(s.cpu.sender, m)} µs, receivers ${us(s.cpu.receiver, m)} µs`,
          s.pass ? 'PASS' : `FAIL (${s.why})`,
        ];
        return parts.join('; ');
      };

      const stopBy = world.expires - 30_000;
      const fits = (seconds: number): boolean => Date.now() + (seconds + 25) * 1000 < stopBy;
      if (settings.warmupSeconds > 0) {
        const rate = Math.max(1, Math.round((o.rates?.[0] ?? o.startRate) / 2));
        log(`warming up at ${rate} msgs/s (${settings.warmupSeconds}s, not recorded)`);
        await step(rate, settings.warmupSeconds);
      }
      const steps: Step[] = [];
      const runStep = async (rate: number): Promise<Step> => {
        log(`measuring ${rate} msgs/s (${(rate * o.members).toLocaleString('en-US')} deliveries/s offered, ${o.seconds}s)`);
        const s = await step(rate, o.seconds);
        steps.push(s);
        log(`  ${describe(s)}`);
        if (!s.pass) await sleep(3000); // let a backlog drain before the next step
        return s;
      };
      if (o.rates) {
        for (const rate of o.rates) {
          if (!fits(o.seconds)) break;
          await runStep(rate);
        }
      } else {
        let best: number | null = null;
        let failed: number | null = null;
        let rate = Math.min(o.startRate, o.maxRate);
        while (steps.length < MAX_STEPS && fits(o.seconds)) {
          let s = await runStep(rate);
          // A step that failed on its p99 alone is run once more before the rate counts as
          // failed: one stall of >100 ms (a slow fsync, a GC, the host) in a 10 s step is enough
          // to fail a p99, and the search never goes above a failed rate again. Losses,
          // duplicates and errors fail at once.
          if (!s.pass && s.why.startsWith('p99') && fits(o.seconds)) {
            log(`  repeating ${rate} msgs/s once: it failed on latency alone`);
            s = await runStep(rate);
          }
          if (s.pass) best = rate;
          else failed = failed === null ? rate : Math.min(failed, rate);
          let next: number;
          if (failed === null) next = Math.min(o.maxRate, Math.round(rate * 1.5));
          else if (best === null) next = Math.round(rate / 2);
          else next = Math.round((best + failed) / 2);
          if (next < 1 || (best !== null && failed !== null && (failed - best) / best <= RESOLUTION) || (failed === null && rate >= o.maxRate)) break;
          rate = next;
        }
      }
      if (steps.length === 0) throw new BenchError('groupchat: no step ran (the user tokens would expire first)');

      const passing = steps.filter((s) => s.pass);
      const top = passing.length > 0 ? passing.reduce((a, b) => (b.rate > a.rate ? b : a)) : null;
      const shown = top ?? steps[0]!;
      const m = shown.sent.scheduled;
      const figures: Record<string, number> = {
        groups: o.groups,
        members: o.members,
        nodes: t.nodes,
        max_sustained_msgs_per_s: top?.rate ?? 0,
        deliveries_per_s: Math.round(shown.received.events / shown.sent.sendSeconds),
        p50_ms: round2(shown.received.latencyMs.p50),
        p99_ms: round2(shown.received.latencyMs.p99),
        max_ms: round2(shown.received.latencyMs.max),
        lost: shown.lost,
        duplicated: shown.duplicated,
        lost_all_steps: steps.reduce((n, s) => n + s.lost, 0),
        duplicated_all_steps: steps.reduce((n, s) => n + s.duplicated, 0),
        server_cpu_us_per_message: us(shown.cpu.nodes, m),
        server_kernel_cpu_us_per_message: us(shown.cpu.nodesSystem, m),
        sender_cpu_us_per_message: us(shown.cpu.sender, m),
        receivers_cpu_us_per_message: us(shown.cpu.receiver, m),
        load_cpu_pct: Math.round(((shown.cpu.sender + shown.cpu.receiver) / shown.seconds) * 100),
        send_p50_ms: round2(shown.sent.latencyMs.p50),
        generator_lag_p99_ms: round2(shown.sent.lagMs.p99),
      };
      if (t.kind === 'cluster') {
        figures.haproxy_cpu_us_per_message = us(shown.cpu.haproxy, m);
        figures.redis_cpu_us_per_message = us(shown.cpu.redis, m);
        figures.redis_commands_per_message = per(shown.cpu.redisCommands, m);
        figures.redis_scripts_per_message = per(shown.cpu.redisScripts, m);
      }
      for (const s of steps) figures[`r${s.rate}_server_cpu_us_per_message`] = us(s.cpu.nodes, s.sent.scheduled);
      const measurements: Measurement[] = steps.map((s) => ({
        target: `${s.rate} msgs/s${s.pass ? '' : ' (fail)'}`,
        round: 1,
        wrk: {
          requests: s.received.events,
          durationSeconds: s.sent.sendSeconds,
          requestsPerSecond: s.received.events / s.sent.sendSeconds,
          latencyMs: { avg: s.received.latencyMs.avg, max: s.received.latencyMs.max, p50: s.received.latencyMs.p50, p75: s.received.latencyMs.p75, p90: s.received.latencyMs.p90, p99: s.received.latencyMs.p99 },
          non2xx: 0,
          socketErrors: { connect: 0, read: 0, write: 0, timeout: 0 },
        },
      }));
      const pins = cpuPinning();
      const goals = [goal('server_cpu_us_per_message', figures.server_cpu_us_per_message!, '<=', 160), goal('lost', figures.lost_all_steps! + figures.duplicated_all_steps!, '<=', 0)];
      if (t.kind === 'cluster') goals.push(goal('redis_cpu_us_per_message', figures.redis_cpu_us_per_message!, '<=', 30));
      return {
        measurements,
        figures,
        goals,
        notes: [
          `rows: one step per rate; req/s = deliveries per second (every member's stream, the sender's own included); latency = receive time - scheduled send time, over every delivery`,
          `figures are the highest passing step's (${top ? `${top.rate} msgs/s` : `none passed; the first step's, ${shown.rate} msgs/s`}): a step passes when every send was answered 201 and nothing was lost, duplicated or misdelivered, with delivery p99 < ${o.p99Ms} ms`,
          `*_cpu_us_per_message: CPU time (user + system) over the step, from the first send to the last delivery, per message sent: nodes and HAProxy from /proc, Redis from INFO cpu, sender and receivers (the load generator) from /proc`,
          `${os.availableParallelism()} CPUs: ${pins ? `the target${t.kind === 'cluster' ? ' (every process of the cluster)' : ''} on CPU ${pins.target}, the sender and the receivers on CPU ${pins.load}` : 'no pinning'}; ${t.kind === 'node' ? `node data on ${o.tmpfs ? 'tmpfs' : 'disk'}` : 'the nodes share one SQLite file on tmpfs'}; every member online (heartbeat)${o.devices ? ' with one web push device' : ''}`,
        ],
      };
    } finally {
      await posters?.close();
      await receivers?.close();
      await target?.stop();
      removeDir();
    }
  },
};
