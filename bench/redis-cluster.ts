/**
 * The `redis-cluster` scenario: what Redis itself spends per 10-member GROUP message, on one
 * Redis and on a Redis Cluster of 3 masters with a replica each, under the same load.
 *
 * For each Redis mode (BENCH_REDIS_MODES, default `single,single-replica,cluster,cluster-classic`): a loopback
 * cluster of BENCH_REDIS_NODES (3) nodes behind HAProxy (bench/lib/cluster-up.ts, every process
 * pinned to the target CPU), an IdP fixture with 10 extra acme members, 10 GROUP conversations of
 * those 10 members, every member online on one SSE stream (opened through the balancer), then
 * sends at a fixed rate (BENCH_REDIS_RATE, 200/s, for BENCH_SECONDS) from a random member of a
 * random conversation. Redis CPU is `used_cpu_sys + used_cpu_user` of INFO cpu of every Redis
 * process (masters and replicas apart on a cluster), read before and after the measured phase;
 * the same over an idle phase before it (streams open, nothing sent) gives the background cost
 * (cluster bus gossip, replication pings, cron) that the `_net` figures take out. Messages are
 * counted in the store (the conversations' newest seqs), deliveries on the streams.
 *
 * `cluster-classic` is the cluster with CHAT_REDIS_PUBSUB=classic: PUBLISH, which a Redis Cluster
 * copies to every node, instead of sharded SPUBLISH, which stays in the channel's shard.
 * `single-replica` is the one Redis with a replica attached (as production would run it), so that
 * a master's cost compares like with like: its replica is counted with the replicas.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BASE, expectOk, type Api } from './fanout-sender.ts';
import { cpuSeconds } from './fanout-proc.ts';
import { sendBody } from './messages.ts';
import { startBenchCluster, type BenchCluster } from './lib/cluster-up.ts';
import { devUserToken } from './lib/dev-token.ts';
import { BenchError } from './lib/errors.ts';
import { devMachineToken } from './lib/machine-token.ts';
import { freePort, pinnedCommand, REPO_ROOT, track } from './lib/processes.ts';
import type { Measurement, Scenario } from './lib/scenario.ts';
import type { MixRequest } from './lib/wrk-script.ts';
import type { WrkResult } from './lib/wrk.ts';

const MEMBERS = Array.from({ length: 10 }, (_, i) => `gc${String(i + 1).padStart(2, '0')}`);
const GROUPS = 10;
const IDLE_SECONDS = 5;
const MODES = ['single', 'single-replica', 'cluster', 'cluster-classic'] as const;
type Mode = (typeof MODES)[number];

function settings(env = process.env): { modes: Mode[]; nodes: number; rate: number } {
  const modes = (env.BENCH_REDIS_MODES ?? MODES.join(',')).split(',').map((m) => m.trim()).filter((m) => m !== '');
  const unknown = modes.filter((m) => !(MODES as readonly string[]).includes(m));
  if (unknown.length > 0 || modes.length === 0) throw new BenchError(`BENCH_REDIS_MODES must list some of ${MODES.join(', ')} (got "${env.BENCH_REDIS_MODES}")`);
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) throw new BenchError(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
    return Number(raw);
  };
  return { modes: modes as Mode[], nodes: int('BENCH_REDIS_NODES', 3, 1, 9), rate: int('BENCH_REDIS_RATE', 200, 1, 5000) };
}

/** The demo fixture plus the 10 members, active acme members (support admits every member). */
function writeFixture(dir: string): string {
  const fixture = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'src/idp/demo-fixture.json'), 'utf8')) as {
    users: Array<Record<string, unknown>>;
    tenants: Array<{ tenant_id: string; members: Array<Record<string, unknown>> }>;
  };
  for (const id of MEMBERS) fixture.users.push({ user_id: id, display_name: `Member ${id}`, avatar_url: null, status: 'ACTIVE' });
  const acme = fixture.tenants.find((t) => t.tenant_id === 'acme');
  if (!acme) throw new BenchError('the demo fixture has no acme tenant');
  for (const id of MEMBERS) acme.members.push({ user_id: id, status: 'ACTIVE', tenant_roles: ['tenant_member'], applications: {} });
  const file = path.join(dir, 'fixture.json');
  fs.writeFileSync(file, JSON.stringify(fixture));
  return file;
}

/** INFO cpu of one Redis: seconds of CPU (sys + user, every thread), and whether it is a master. */
function redisCpu(port: number): { seconds: number; master: boolean } {
  const info = execFileSync('redis-cli', ['-p', String(port), 'info', 'everything'], { timeout: 5000 }).toString();
  const n = (name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? Number.NaN);
  return { seconds: n('used_cpu_sys') + n('used_cpu_user'), master: /^role:master/m.test(info) };
}

function redisCpus(cluster: BenchCluster): { masters: number; replicas: number } {
  let masters = 0;
  let replicas = 0;
  for (const port of cluster.redisPorts) {
    const { seconds, master } = redisCpu(port);
    if (master) masters += seconds;
    else replicas += seconds;
  }
  return { masters, replicas };
}

/** INFO commandstats summed over every Redis: per command, calls and µs spent in it (Redis's own count). */
function commandStats(cluster: BenchCluster): Map<string, { calls: number; usec: number }> {
  const out = new Map<string, { calls: number; usec: number }>();
  for (const port of cluster.redisPorts) {
    const info = execFileSync('redis-cli', ['-p', String(port), 'info', 'commandstats'], { timeout: 5000 }).toString();
    for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
      const s = out.get(m[1]!) ?? { calls: 0, usec: 0 };
      s.calls += Number(m[2]);
      s.usec += Number(m[3]);
      out.set(m[1]!, s);
    }
  }
  return out;
}

/** The commands that took the most of Redis's time between two readings, per message. */
function topCommands(before: Map<string, { calls: number; usec: number }>, after: Map<string, { calls: number; usec: number }>, messages: number): string {
  return [...after]
    .map(([name, a]) => ({ name, calls: (a.calls - (before.get(name)?.calls ?? 0)) / messages, usec: (a.usec - (before.get(name)?.usec ?? 0)) / messages }))
    .filter((c) => c.usec > 0)
    .sort((x, y) => y.usec - x.usec)
    .slice(0, 8)
    .map((c) => `${c.name} ${c.usec.toFixed(1)} µs (${c.calls.toFixed(1)} calls)`)
    .join(', ');
}

/** A replica of the single Redis (pinned like the cluster), counted in `cluster.redisPorts`. */
async function attachReplica(cluster: BenchCluster, log: (line: string) => void): Promise<() => void> {
  const port = await freePort();
  const [command, args] = pinnedCommand('target', 'redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--replicaof', '127.0.0.1', String(cluster.redisPorts[0]), '--save', '', '--appendonly', 'no', '--loglevel', 'warning']);
  const child = spawn(command, args, { stdio: 'ignore' });
  track(child);
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      if (/master_link_status:up/.test(execFileSync('redis-cli', ['-p', String(port), 'info', 'replication'], { timeout: 2000 }).toString())) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new BenchError(`the replica on ${port} did not sync with ${cluster.redisPorts[0]} within 20 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
  cluster.redisPorts.push(port);
  log(`replica of the Redis on ${port}, in sync`);
  return () => void child.kill('SIGKILL');
}

const nodesCpu = (cluster: BenchCluster): number => cluster.nodes.reduce((sum, n) => sum + cpuSeconds(n.pid).user + cpuSeconds(n.pid).system, 0);

/** One SSE stream per member through the balancer, counting message.created events. */
async function openStreams(cluster: BenchCluster, log: (line: string) => void): Promise<{ received: () => number; close: () => void }> {
  let received = 0;
  const controllers: AbortController[] = [];
  for (const userId of MEMBERS) {
    const { token } = await devUserToken({ idpBaseUrl: cluster.idp, userId, clientId: 'acme-support-web', clientSecret: 'acme-support-web-secret' });
    const cred = await expectOk({ origin: cluster.lb, headers: { Authorization: `Bearer ${token}` } }, 'GET', `${BASE}/notifications/realtime-token`);
    const url = new URL(String(cred.stream_url));
    const controller = new AbortController();
    controllers.push(controller);
    const res = await fetch(`${cluster.lb}${url.pathname}${url.search}`, { signal: controller.signal, headers: { Accept: 'text/event-stream' } });
    if (res.status !== 200 || !res.body) throw new BenchError(`stream of ${userId} answered ${res.status}`);
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let tail = '';
    void (async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          const text = tail + decoder.decode(value, { stream: true });
          const cut = text.lastIndexOf('\n');
          for (const line of text.slice(0, cut + 1).split('\n')) if (line === 'event: message.created') received += 1;
          tail = text.slice(cut + 1);
        }
      } catch {
        // aborted at the end
      }
    })();
  }
  log(`${MEMBERS.length} streams open`);
  return { received: () => received, close: () => controllers.forEach((c) => c.abort()) };
}

/**
 * Sends the mix open loop at `rate` for `seconds` from this process (keep-alive fetch): light
 * enough at these rates, and it counts answers instead of giving up on the first bad one (the
 * figures come from Redis, the nodes and the store, not from these answers).
 */
async function sendAtRate(origin: string, requests: MixRequest[], rate: number, seconds: number): Promise<{ wrk: WrkResult; failed: number }> {
  const total = Math.round(rate * seconds);
  const latencies: number[] = [];
  let failed = 0;
  const t0 = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < total; i += 1) {
    const due = t0 + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const r = requests[Math.floor(Math.random() * requests.length)]!;
    const started = performance.now();
    // A keep-alive connection the balancer closed while idle fails the request that reuses it;
    // sent again with the same Idempotency-Key, as a client would, it is stored once.
    const init = { method: r.method, headers: Object.assign({ 'Idempotency-Key': randomUUID() }, r.headers), body: r.body };
    const attempt = (left: number): Promise<Response> =>
      fetch(origin + r.path, Object.assign({ signal: AbortSignal.timeout(30_000) }, init)).catch((error: unknown) => (left > 0 ? attempt(left - 1) : Promise.reject(error)));
    inFlight.push(
      attempt(2).then(
        async (res) => {
          const text = await res.text();
          if (res.status === 201) latencies.push(performance.now() - started);
          else {
            failed += 1;
            if (failed <= 3) process.stderr.write(`bench: redis-cluster: a send answered ${res.status}: ${text.slice(0, 300)}\n`);
          }
        },
        (error: unknown) => {
          failed += 1;
          if (failed <= 3) process.stderr.write(`bench: redis-cluster: a send failed: ${String(error)}\n`);
        },
      ),
    );
  }
  await Promise.all(inFlight);
  const durationSeconds = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  const q = (p: number): number => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0;
  const wrk: WrkResult = {
    requests: latencies.length,
    durationSeconds,
    requestsPerSecond: latencies.length / durationSeconds,
    latencyMs: { avg: latencies.reduce((a, b) => a + b, 0) / Math.max(1, latencies.length), max: latencies.at(-1) ?? 0, p50: q(0.5), p75: q(0.75), p90: q(0.9), p99: q(0.99) },
    non2xx: failed,
    socketErrors: { connect: 0, read: 0, write: 0, timeout: 0 },
  };
  return { wrk, failed };
}

async function newestSeqs(api: Api, ids: string[]): Promise<number> {
  let sum = 0;
  for (const id of ids) sum += ((await expectOk(api, 'GET', `${BASE}/conversations/${id}/messages?limit=1`)).items as Array<{ seq: number }>)[0]?.seq ?? 0;
  return sum;
}

interface ModeResult {
  figures: Record<string, number>;
  measurement: Measurement;
  note: string;
}

async function runMode(mode: Mode, o: ReturnType<typeof settings>, seconds: number, fixture: string, log: (line: string) => void): Promise<ModeResult> {
  const env: Record<string, string> = mode === 'cluster-classic' ? { CHAT_REDIS_PUBSUB: 'classic' } : {};
  log(`${mode}: starting ${o.nodes} node(s) on ${mode.startsWith('single') ? 'one Redis' : 'a Redis Cluster of 3 masters and 3 replicas'}`);
  const clustered = mode === 'cluster' || mode === 'cluster-classic';
  const cluster = await startBenchCluster(o.nodes, (l) => log(`${mode}: ${l}`), env, { redisCluster: clustered, fixturePath: fixture });
  let stopReplica = (): void => undefined;
  try {
    if (mode === 'single-replica') stopReplica = await attachReplica(cluster, (l) => log(`${mode}: ${l}`));
    const { token } = await devMachineToken({ idpBaseUrl: cluster.idp, clientId: 'acme-support-backend', clientSecret: 'acme-support-backend-secret' });
    const api: Api = { origin: cluster.lb, headers: { Authorization: `Bearer ${token}` } };
    const ids: string[] = [];
    for (let g = 0; g < GROUPS; g += 1) ids.push((await expectOk(api, 'POST', `${BASE}/conversations`, { type: 'GROUP', name: `redis bench ${g}`, member_user_ids: MEMBERS })).conversation_id as string);
    const streams = await openStreams(cluster, log);
    try {
      const headers = { ...api.headers, 'Content-Type': 'application/json' };
      const requests: MixRequest[] = ids.flatMap((id, g) => MEMBERS.map((m) => ({ method: 'POST', path: `${BASE}/conversations/${id}/messages`, headers, body: sendBody(m, `g${g}`) })));
      log(`${mode}: warming up (${o.rate}/s, 3 s)`);
      await sendAtRate(cluster.lb, requests, o.rate, 3);
      await new Promise((r) => setTimeout(r, 1000));
      const idle0 = redisCpus(cluster);
      await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
      const idle1 = redisCpus(cluster);
      const idlePerSecond = (idle1.masters + idle1.replicas - idle0.masters - idle0.replicas) / IDLE_SECONDS;
      log(`${mode}: measuring ${o.rate} msgs/s for ${seconds} s`);
      const seq0 = await newestSeqs(api, ids);
      const got0 = streams.received();
      const cpu0 = redisCpus(cluster);
      const stats0 = commandStats(cluster);
      const node0 = nodesCpu(cluster);
      const t0 = Date.now();
      const { wrk, failed } = await sendAtRate(cluster.lb, requests, o.rate, seconds);
      const cpu1 = redisCpus(cluster);
      const stats1 = commandStats(cluster);
      const node1 = nodesCpu(cluster);
      const elapsed = (Date.now() - t0) / 1000;
      const messages = (await newestSeqs(api, ids)) - seq0;
      const deadline = Date.now() + 10_000;
      while (streams.received() - got0 < messages * MEMBERS.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      const delivered = streams.received() - got0;
      const us = (s: number): number => Math.round((s / messages) * 1e6 * 10) / 10;
      const total = cpu1.masters + cpu1.replicas - cpu0.masters - cpu0.replicas;
      const figures: Record<string, number> = {
        [`${mode}_messages`]: messages,
        [`${mode}_redis_cpu_us_per_message`]: us(total),
        [`${mode}_redis_cpu_us_per_message_net`]: us(Math.max(0, total - idlePerSecond * elapsed)),
        [`${mode}_redis_idle_cpu_ms_per_s`]: Math.round(idlePerSecond * 1e4) / 10,
        [`${mode}_node_cpu_us_per_message`]: us(node1 - node0),
        [`${mode}_lost_deliveries`]: messages * MEMBERS.length - delivered,
        [`${mode}_failed_sends`]: failed,
      };
      if (mode !== 'single') {
        figures[`${mode}_redis_masters_cpu_us_per_message`] = us(cpu1.masters - cpu0.masters);
        figures[`${mode}_redis_replicas_cpu_us_per_message`] = us(cpu1.replicas - cpu0.replicas);
      }
      log(`${mode}: ${messages} messages, Redis ${figures[`${mode}_redis_cpu_us_per_message`]} µs/message (${figures[`${mode}_redis_cpu_us_per_message_net`]} net of idle ${figures[`${mode}_redis_idle_cpu_ms_per_s`]} ms/s), nodes ${figures[`${mode}_node_cpu_us_per_message`]} µs/message, ${delivered} of ${messages * MEMBERS.length} deliveries`);
      const top = `${mode}: per message, Redis's own time in commands (INFO commandstats, every Redis): ${topCommands(stats0, stats1, messages)}`;
      log(top);
      return { figures, measurement: { target: mode, round: 1, wrk }, note: top };
    } finally {
      streams.close();
    }
  } finally {
    stopReplica();
    await cluster.stop();
  }
}

export const scenario: Scenario = {
  name: 'redis-cluster',
  description: 'Redis CPU (INFO cpu) per 10-member GROUP message with every member on an SSE stream: one Redis (alone, then with a replica), a Redis Cluster (3 masters + 3 replicas, sharded pub/sub) and the cluster with classic pub/sub, N nodes behind HAProxy at a fixed rate',
  async run(benchSettings, log) {
    const o = settings();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-redis-cluster-'));
    try {
      const fixture = writeFixture(dir);
      const figures: Record<string, number> = {};
      const measurements: Measurement[] = [];
      const commands: string[] = [];
      for (const mode of o.modes) {
        const r = await runMode(mode, o, benchSettings.seconds, fixture, log);
        Object.assign(figures, r.figures);
        measurements.push(r.measurement);
        commands.push(r.note);
      }
      return {
        measurements,
        figures,
        goals: [],
        notes: [
          `${o.nodes} node(s), ${GROUPS} GROUP conversations of ${MEMBERS.length} members, ${o.rate} msgs/s; every process of the cluster pinned to the target CPU, the load to another`,
          'redis_cpu_us_per_message: INFO cpu (used_cpu_sys + used_cpu_user) of every Redis process over the measured phase, per message stored; _net: less the idle rate measured just before with the streams open',
          'a Redis Cluster splits this over 3 masters (3 cores): per-master load is about a third of the masters figure',
          ...commands,
        ],
      };
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
};
