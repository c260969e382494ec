/**
 * The `cluster` scenario: the `messages` and `fanout` loads through the load balancer, against a
 * 1-node and then a 3-node loopback cluster in the same run, with what forwarding costs.
 *
 * Each cluster is the `npm run cluster` one (cluster/lib: Redis, the IdP as its own process, N
 * nodes with CHAT_CLUSTER=redis on one shared SQLite file, HAProxy round robin), on random ports,
 * in a fresh directory on tmpfs, every process pinned to the target CPU (bench/lib/cluster-up.ts).
 * The 1-node cluster runs the same code path as the 3-node one (Redis bus, rate limits, ring),
 * only never forwards. Against each:
 *
 *  (a) sends at the maximum rate through the balancer: wrk, BENCH_CONNECTIONS (64) connections,
 *      a random (GROUP conversation, member) per request of 200 conversations, as `messages` (a);
 *      the store must then hold exactly what wrk was answered for;
 *  (b) history pages (GET ?limit=50) through the balancer, as `messages` (c);
 *  (c) fan-out: BENCH_CLUSTER_CONNECTIONS (3,000) SSE streams opened through the balancer, one
 *      CHANNEL, BENCH_CLUSTER_FANOUT_RATE (10) msgs/s: send-to-receive p50/p99, events/s, no loss.
 * For each phase, the CPU time of every node, HAProxy and Redis (/proc/<pid>/stat), and, from
 * every node's metrics port, where conversation operations ran (chat_actor_calls_total).
 * For the 3-node cluster also (d): sends to conversations one node owns, straight to the owner's
 * port and then to another node's, at a light fixed rate (half of (a)'s, at most 1,000/s) for the
 * latency of the forwarding hop and at the maximum rate for its CPU (bench/cluster-direct.ts).
 *
 * All of it shares the machine's cores; the figures that carry to other machines are the CPU
 * costs per operation, which docs/capacity.md turns into node counts (bench/lib/cluster-capacity.ts).
 *
 * `--stores sqlite,cassandra` (bench/lib/stores.ts) runs all of it on the shared SQLite file, then
 * again with the nodes on Cassandra: one node of the bench's own (bench/lib/cassandra.ts; started
 * after the SQLite clusters are gone, pinned with the cluster, stopped at the end), a fresh
 * keyspace per cluster, and its JVM's CPU per send and per page beside the other processes'.
 */
import os from 'node:os';
import { directComparison, type DirectRun } from './cluster-direct.ts';
import { maxOpenFiles } from './fanout-proc.ts';
import { fanoutStep, type FanoutResult } from './cluster-fanout.ts';
import { CONVERSATIONS, createConversations, historyPhase, sendPhase, type LoadPhase } from './cluster-load.ts';
import type { Api } from './fanout-sender.ts';
import { buildNode } from './lib/chat-node.ts';
import { capacityNotes, perCore, type UnitCosts } from './lib/cluster-capacity.ts';
import { nodesCpu, scrapeAll } from './lib/cluster-metrics.ts';
import { cassandraStore, dropKeyspace, usingCassandra, type MeasuredCassandra } from './lib/cassandra.ts';
import { startBenchCluster, type BenchCluster, type ClusterCassandra } from './lib/cluster-up.ts';
import { BenchError } from './lib/errors.ts';
import { devMachineToken } from './lib/machine-token.ts';
import { cpuPinning } from './lib/processes.ts';
import { goal, type BenchSettings, type Measurement, type Scenario, type ScenarioResult } from './lib/scenario.ts';
import { mergeResults, parseStores, STORES_USAGE, underStore, type StoreKind } from './lib/stores.ts';
import type { WrkResult } from './lib/wrk.ts';

const DEFAULT_CONNECTIONS = 64;
const DIRECT_RATE_CAP = 1000;

function clusterSettings(env: Record<string, string | undefined> = process.env): { streams: number; rate: number } {
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) throw new BenchError(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
    return Number(raw);
  };
  const streams = int('BENCH_CLUSTER_CONNECTIONS', 3000, 1, 50_000);
  // HAProxy holds two descriptors per stream and derives its connection limit from the limit it
  // inherits from this process; past it, streams would queue in the balancer, not open.
  const files = maxOpenFiles(process.pid) ?? Number.POSITIVE_INFINITY;
  if (2 * streams + 1024 > files) throw new BenchError(`BENCH_CLUSTER_CONNECTIONS=${streams} needs ${2 * streams + 1024} open files for HAProxy, and the limit is ${files}: raise it (ulimit -n) in the shell running the bench, or open fewer streams`);
  return { streams, rate: int('BENCH_CLUSTER_FANOUT_RATE', 10, 1, 1000) };
}

interface ClusterRun {
  size: number;
  sends: LoadPhase;
  /** Null when error answers discarded the phase (the sends before it stand). */
  history: (LoadPhase & { pageBytes: number }) | null;
  fanout: FanoutResult;
  direct?: { owner: DirectRun; forwarded: DirectRun; conversations: number };
  onCassandra: boolean;
}

/** Waits until every node sees the whole cluster (node-1 starts alone; the others join after). */
async function converged(cluster: BenchCluster): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const seen = (await scrapeAll(cluster)).map((c) => c.clusterNodes);
    if (seen.every((n) => n === cluster.size)) return;
    if (Date.now() > deadline) throw new BenchError(`cluster of ${cluster.size}: the nodes see ${seen.join(', ')} nodes after 15 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function runAgainst(size: number, settings: BenchSettings, connections: number, fan: { streams: number; rate: number }, log: (line: string) => void, cassandra: ClusterCassandra | null): Promise<ClusterRun> {
  const cluster = await startBenchCluster(size, log, {}, cassandra ? { cassandra } : {});
  try {
    await converged(cluster);
    log(`${size} node(s) up: balancer ${cluster.lb}, nodes ${cluster.nodes.map((n) => `${n.id} :${n.port}`).join(', ')}`);
    const machine = await devMachineToken({ idpBaseUrl: cluster.idp, clientId: 'acme-support-backend', clientSecret: 'acme-support-backend-secret' });
    const api: Api = { origin: cluster.lb, headers: { Authorization: `Bearer ${machine.token}` } };
    log(`${size} node(s): creating ${CONVERSATIONS} GROUP conversations through the balancer`);
    const conversations = await createConversations(api);
    const sends = await sendPhase(cluster, api, conversations, settings, connections, log);
    const history = await historyPhase(cluster, api, conversations, settings, connections, log).catch((err: unknown) => {
      if (!(err instanceof BenchError)) throw err;
      log(`${size} node(s): history phase discarded: ${err.message}`);
      return null;
    });
    const rate = Math.max(1, Math.min(DIRECT_RATE_CAP, Math.round(sends.wrk.requestsPerSecond / 2)));
    const direct = size > 1 ? await directComparison(cluster, api, conversations, { rate, lightSeconds: Math.min(4, settings.seconds), maxSeconds: settings.seconds, connections }, log) : undefined;
    const fanout = await fanoutStep(cluster, api, fan.streams, fan.rate, settings.seconds, Math.min(2, settings.warmupSeconds), log);
    return { size, sends, history, fanout, direct, onCassandra: cassandra !== null };
  } finally {
    log(`${size} node(s): stopping the cluster`);
    await cluster.stop();
  }
}

const round2 = (n: number): number => Math.round(n * 100) / 100;
const us = (cpuSeconds: number, ops: number): number => round2((cpuSeconds / ops) * 1e6);

function fanoutWrk(f: FanoutResult): WrkResult {
  const l = f.report.latencyMs;
  return { requests: f.report.events, durationSeconds: f.report.sendSeconds, requestsPerSecond: f.eventsPerSecond, latencyMs: { avg: l.avg, max: l.max, p50: l.p50, p75: l.p75, p90: l.p90, p99: l.p99 }, non2xx: 0, socketErrors: { connect: 0, read: 0, write: 0, timeout: 0 } };
}

function figuresOf(r: ClusterRun): Record<string, number> {
  const p = `n${r.size}`;
  const s = r.sends;
  const f = r.fanout;
  const operations = s.calls.local + s.calls.forwarded;
  return {
    [`${p}_send_rps`]: Math.round(s.wrk.requestsPerSecond),
    [`${p}_send_p50_ms`]: round2(s.wrk.latencyMs.p50),
    [`${p}_send_p99_ms`]: round2(s.wrk.latencyMs.p99),
    [`${p}_send_node_cpu_us`]: us(nodesCpu(s.cpu), s.wrk.requests),
    [`${p}_send_haproxy_cpu_us`]: us(s.cpu.haproxy, s.wrk.requests),
    [`${p}_send_redis_cpu_us`]: us(s.cpu.redis, s.wrk.requests),
    ...(r.onCassandra ? { [`${p}_send_cassandra_cpu_us`]: us(s.cpu.cassandra, s.wrk.requests), [`${p}_send_cassandra_net_cpu_us`]: us(s.cpu.cassandraNet, s.wrk.requests) } : {}),
    [`${p}_forwarded_pct`]: operations > 0 ? round2((s.calls.forwarded / operations) * 100) : 0,
    ...historyFigures(p, r.history, r.onCassandra),
    [`${p}_fanout_events_per_s`]: Math.round(f.eventsPerSecond),
    [`${p}_fanout_p50_ms`]: round2(f.report.latencyMs.p50),
    [`${p}_fanout_p99_ms`]: round2(f.report.latencyMs.p99),
    [`${p}_fanout_max_ms`]: round2(f.report.latencyMs.max),
    [`${p}_fanout_lost`]: f.lost,
    [`${p}_event_node_cpu_us`]: us(nodesCpu(f.cpu), f.report.events),
    [`${p}_event_haproxy_cpu_us`]: us(f.cpu.haproxy, f.report.events),
    [`${p}_connect_node_cpu_us`]: us(nodesCpu(f.connectCpu), f.connections),
    [`${p}_node_kb_per_stream`]: round2(f.nodeKBPerStream),
    [`${p}_haproxy_kb_per_stream`]: round2(f.haproxyKBPerStream),
  };
}

function historyFigures(p: string, h: ClusterRun['history'], onCassandra: boolean): Record<string, number> {
  if (!h) return { [`${p}_history_discarded`]: 1 };
  return {
    [`${p}_history_rps`]: Math.round(h.wrk.requestsPerSecond),
    [`${p}_history_p50_ms`]: round2(h.wrk.latencyMs.p50),
    [`${p}_history_p99_ms`]: round2(h.wrk.latencyMs.p99),
    [`${p}_history_node_cpu_us`]: us(nodesCpu(h.cpu), h.wrk.requests),
    [`${p}_history_haproxy_cpu_us`]: us(h.cpu.haproxy, h.wrk.requests),
    ...(onCassandra ? { [`${p}_history_cassandra_net_cpu_us`]: us(h.cpu.cassandraNet, h.wrk.requests) } : {}),
  };
}

/** The dearer of the 1-node and 3-node figure, of those measured (0 when neither was: a discarded phase). */
const worst = (figures: Record<string, number>, name: string): number => Math.max(0, ...['n1', 'n3'].map((p) => figures[`${p}_${name}`]).filter((v): v is number => v !== undefined));

/** Both clusters, one after the other, on one store; figures without the store's prefix. */
async function runStore(settings: BenchSettings, connections: number, fan: { streams: number; rate: number }, log: (line: string) => void, cassandra: MeasuredCassandra | null): Promise<ScenarioResult> {
  const against = async (size: number): Promise<ClusterRun> => {
    if (!cassandra) return runAgainst(size, settings, connections, fan, log, null);
    // A fresh keyspace per cluster: the 3-node cluster does not start on the 1-node one's data.
    const keyspace = `bench_cluster_n${size}_${process.pid}`;
    try {
      return await runAgainst(size, settings, connections, fan, log, { store: cassandraStore(cassandra.server, keyspace), pids: cassandra.server.pids, idleCores: cassandra.cpu.idle });
    } finally {
      await dropKeyspace(cassandra.server, keyspace).catch((e: unknown) => log(`could not drop ${keyspace}: ${String(e)}`));
    }
  };
  const one = await against(1);
  const three = await against(3);
  const d = three.direct!;

  const figures: Record<string, number> = { connections, streams: fan.streams, fanout_rate: fan.rate, ...figuresOf(one), ...figuresOf(three) };
  figures.n3_vs_n1_send_ratio = round2(three.sends.wrk.requestsPerSecond / one.sends.wrk.requestsPerSecond);
  if (one.history && three.history) figures.n3_vs_n1_history_ratio = round2(three.history.wrk.requestsPerSecond / one.history.wrk.requestsPerSecond);
  const ownerUs = us(nodesCpu(d.owner.maxCpu), d.owner.max.requests);
  const forwardedUs = us(nodesCpu(d.forwarded.maxCpu), d.forwarded.max.requests);
  const forwardUs = round2(forwardedUs - ownerUs);
  Object.assign(figures, {
    direct_rate: d.owner.light.rate,
    direct_owner_p50_ms: round2(d.owner.light.latencyMs.p50),
    direct_owner_p99_ms: round2(d.owner.light.latencyMs.p99),
    direct_forwarded_p50_ms: round2(d.forwarded.light.latencyMs.p50),
    direct_forwarded_p99_ms: round2(d.forwarded.light.latencyMs.p99),
    forward_added_p50_ms: round2(d.forwarded.light.latencyMs.p50 - d.owner.light.latencyMs.p50),
    direct_owner_max_rps: Math.round(d.owner.max.requestsPerSecond),
    direct_forwarded_max_rps: Math.round(d.forwarded.max.requestsPerSecond),
    direct_owner_node_cpu_us: ownerUs,
    direct_forwarded_node_cpu_us: forwardedUs,
    forward_cpu_us: forwardUs,
    // What the balancer run should have cost, from the two: owner + forwarded share x hop.
    n3_send_node_cpu_predicted_us: round2(ownerUs + (figures.n3_forwarded_pct! / 100) * forwardUs),
    forward_cpu_via_lb_us: figures.n3_forwarded_pct! > 0 ? round2((figures.n3_send_node_cpu_us! - figures.n1_send_node_cpu_us!) / (figures.n3_forwarded_pct! / 100)) : 0,
  });
  if (cassandra) figures.cassandra_idle_cores = Math.round(cassandra.cpu.idle * 1000) / 1000;
  const costs: UnitCosts = {
    // Conservative: the dearer of a send in the 1-node cluster and a local send in the 3-node one.
    sendLocalUs: Math.max(figures.n1_send_node_cpu_us!, ownerUs),
    forwardUs: Math.max(0, forwardUs),
    pageUs: worst(figures, 'history_node_cpu_us'),
    eventUs: Math.max(figures.n1_event_node_cpu_us!, figures.n3_event_node_cpu_us!),
    redisSendUs: Math.max(figures.n1_send_redis_cpu_us!, figures.n3_send_redis_cpu_us!),
    sendCoLocatedUs: figures.n3_send_node_cpu_us!,
    ...(cassandra
      ? {
          cassandraSendUs: Math.max(figures.n1_send_cassandra_net_cpu_us!, figures.n3_send_cassandra_net_cpu_us!),
          cassandraPageUs: worst(figures, 'history_cassandra_net_cpu_us'),
        }
      : {}),
  };
  const pc = perCore(costs);
  Object.assign(figures, { sends_per_core_local: pc.sendsLocal, sends_per_core_forwarded: pc.sendsForwarded, pages_per_core: pc.pages, events_per_core: pc.events, redis_sends_per_core: pc.redisSends });
  // Per core of the whole ring: at RF n every write costs n replicas, all counted in the JVMs' CPU.
  if (cassandra) figures[`cassandra_sends_per_core_rf${cassandra.server.pids.length}`] = pc.cassandraSends;

  return {
    measurements: measurementsOf([one, three]),
    figures,
    goals: [
      goal('n1_fanout_lost', figures.n1_fanout_lost!, '<=', 0),
      goal('n3_fanout_lost', figures.n3_fanout_lost!, '<=', 0),
      ...['n1', 'n3'].filter((p) => figures[`${p}_history_discarded`] !== undefined).map((p) => goal(`${p}_history_discarded`, 1, '<=', 0)),
    ],
    notes: [...notesOf(connections, d, cassandra === null ? null : cassandra.server.pids.length), ...capacityNotes(costs)],
  };
}

function measurementsOf(runs: ClusterRun[]): Measurement[] {
  const measurements: Measurement[] = [];
  for (const r of runs) {
    const t = `${r.size} node${r.size > 1 ? 's' : ''}`;
    measurements.push({ target: `${t}: send via LB`, round: 1, wrk: r.sends.wrk });
    if (r.history) measurements.push({ target: `${t}: history via LB`, round: 1, wrk: r.history.wrk });
    if (r.direct) {
      const rate = r.direct.owner.light.rate;
      measurements.push(
        { target: `${t}: to owner, ${rate}/s`, round: 1, wrk: r.direct.owner.lightWrk },
        { target: `${t}: to non-owner, ${rate}/s`, round: 1, wrk: r.direct.forwarded.lightWrk },
        { target: `${t}: to owner, max`, round: 1, wrk: r.direct.owner.max },
        { target: `${t}: to non-owner, max`, round: 1, wrk: r.direct.forwarded.max },
      );
    }
    measurements.push({ target: `${t}: events ${r.fanout.rate}/s x ${r.fanout.connections}`, round: 1, wrk: fanoutWrk(r.fanout) });
  }
  return measurements;
}

/** `cassandraNodes`: the ring the nodes run on (its size is the keyspace's replication factor, up to 3), or null on SQLite. */
function notesOf(connections: number, d: NonNullable<ClusterRun['direct']>, cassandraNodes: number | null): string[] {
  const onCassandra = cassandraNodes !== null;
  const pins = cpuPinning();
  return [
    `rows "via LB": wrk -t1 -c${connections} through HAProxy (a random conversation of ${CONVERSATIONS} and member per request); "to owner" / "to non-owner": sends to ${d.conversations} conversations node-1 owns, straight to node-1's port / node-2's, open loop at ${d.owner.light.rate}/s (latency from the scheduled start), then wrk at the maximum rate (CPU); "events": SSE events delivered per second over all streams (latency = receive − send)`,
    `*_cpu_us: CPU time (user + system, /proc/<pid>/stat) per operation over the measured phase: node = all nodes together; haproxy and redis apart`,
    `n3_forwarded_pct: share of conversation operations the receiving node forwarded to the owner (chat_actor_calls_total on every node's metrics port); history reads are not actor operations and are never forwarded`,
    `forward_cpu_us = node CPU (all nodes) per send to the non-owner − per send to the owner, both at the maximum rate; n3_send_node_cpu_predicted_us = owner cost + forwarded share x forward_cpu_us, beside the measured n3_send_node_cpu_us; forward_cpu_via_lb_us = (n3 − n1 balancer cost) / forwarded share, which also carries 3 processes sharing one core and ${onCassandra ? 'one Cassandra' : 'one SQLite file'}`,
    `per-send CPU falls as the rate rises (more work per wake-up), so costs at the maximum rate give throughput per core; at a lighter load a node uses more CPU per send than these`,
    `${os.availableParallelism()} CPUs: ${pins ? `every process of the cluster pinned to CPU ${pins.target}, wrk / the fixed-rate generator / the SSE clients to CPU ${pins.load}` : 'no pinning'}; so 3 nodes share the core 1 node had, and are slower here by construction: the 1-vs-3 comparison shows the overhead, not the scaling; capacity comes from the CPU costs`,
    onCassandra
      ? `the nodes run on ${cassandraNodes === 1 ? "one Cassandra node of the bench's own (replication factor 1" : `a ring of ${cassandraNodes} Cassandra nodes of the bench's own (127.0.0.1-${cassandraNodes}, replication factor ${Math.min(3, cassandraNodes!)}`}, 512 MB heap each, data on tmpfs, pinned with the cluster), a fresh keyspace per cluster; *_cassandra_cpu_us: the JVMs' CPU per operation (all of them), *_cassandra_net_cpu_us less their idle burn (cassandra_idle_cores, measured before any load) over the phase`
      : `the nodes share one SQLite file (shared-file mode: one writer at a time across processes) on tmpfs; the single-node \`messages\` and \`fanout\` scenarios run without Redis (local bus, in-memory rate limits)`,
  ];
}

export const scenario: Scenario = {
  name: 'cluster',
  description: 'sends, history pages and SSE fan-out through HAProxy to a 1-node and a 3-node loopback cluster (Redis, IdP, shared SQLite or Cassandra), CPU per operation of every process, and the cost of forwarding to the owner',
  usage: STORES_USAGE,
  async run(settings, log, args) {
    const stores = parseStores('cluster', args);
    const connections = process.env.BENCH_CONNECTIONS ? settings.connections : DEFAULT_CONNECTIONS;
    const fan = clusterSettings();
    buildNode(log);
    const results: ScenarioResult[] = [];
    const storeLog = (store: StoreKind) => (line: string): void => log(`${store} store: ${line}`);
    // SQLite first, before any JVM runs beside the clusters.
    if (stores.includes('sqlite')) results.push(underStore('sqlite', stores, await runStore(settings, connections, fan, storeLog('sqlite'), null)));
    if (stores.includes('cassandra')) {
      const result = await usingCassandra(log, (c) => runStore(settings, connections, fan, storeLog('cassandra'), c));
      results.push(underStore('cassandra', stores, result));
    }
    return mergeResults(results);
  },
};
