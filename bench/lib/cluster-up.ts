/**
 * A loopback cluster for the `cluster` bench: Redis, the IdP, N nodes and HAProxy, brought up by
 * the cluster launcher's library (cluster/lib/start.ts, random ports, its own directory), with
 * the bench's settings and the bench's guarantees:
 *
 *  - the nodes run as the other benches run one: the esbuild bundle, rate limits raised out of
 *    reach, no CHAT_* setting inherited from the caller's shell, a short shutdown grace;
 *  - every process of the cluster is pinned to the target CPU(s) (taskset -a: every thread), as
 *    bench/lib/processes.ts pins a single node, so wrk and the SSE clients keep the load CPU;
 *  - nothing outlives the harness: the launcher starts its processes detached (their own process
 *    groups, so Ctrl-C reaches only us), and they are not children bench/lib/processes.ts tracks;
 *    an exit cleanup SIGKILLs every pid of the cluster's state file (Ctrl-C, SIGTERM, a throw),
 *    and `stop()` stops them in order (nodes first) on the normal path.
 *
 * The launcher reads a node's environment from process.env (cluster/lib/env.ts `withBase`), so
 * the bench's settings are put into process.env for the duration of the start and restored after.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { lbUrl, idpUrl } from '../../cluster/lib/env.ts';
import type { NodeLayout } from '../../cluster/lib/layout.ts';
import { runs } from '../../cluster/lib/procs.ts';
import { startCluster } from '../../cluster/lib/start.ts';
import { readState, type ClusterState, type ClusterStore } from '../../cluster/lib/state.ts';
import { stopCluster } from '../../cluster/lib/stop.ts';
import { BenchError } from './errors.ts';
import { assertNotInterrupted, cpuPinning, onExit, REPO_ROOT } from './processes.ts';

const UNREACHABLE_RATE = '1000000000/60s';
const CASSANDRA_READY_MS = 180_000;

/** CHAT_* settings of every bench cluster node (the cluster launcher sets the cluster's own). */
const BENCH_NODE_ENV: Record<string, string> = {
  CHAT_LOG_LEVEL: 'warn',
  CHAT_RATE_CLIENT: UNREACHABLE_RATE,
  CHAT_RATE_SEND: UNREACHABLE_RATE,
  CHAT_RATE_LOOKUP: UNREACHABLE_RATE,
  CHAT_SHUTDOWN_GRACE_MS: '1000',
  // Credentials as long as the user tokens allow (the launcher's IdP caps them at 10 minutes).
  CHAT_REALTIME_TOKEN_TTL_MS: '3600000',
  // The retention job's first run (within 10 s of the start) would be noise in a measured phase.
  CHAT_RETENTION_INTERVAL_MS: '0',
  // The fan-out step opens thousands of streams with five credentials: no per-user cap.
  CHAT_REALTIME_MAX_STREAMS_PER_USER: '100000',
  CHAT_REALTIME_MAX_STREAMS: '1000000',
};

export interface BenchClusterNode extends NodeLayout {
  pid: number;
  origin: string;
  metricsUrl: string;
}

export interface BenchCluster {
  size: number;
  dir: string;
  /** The load balancer, what clients use. */
  lb: string;
  lbPort: number;
  idp: string;
  nodes: BenchClusterNode[];
  haproxyPid: number;
  /** The Redis (with a Redis Cluster: its first master, redis-1). */
  redisPid: number;
  /** Every Redis port: one, or the Redis Cluster's six (masters first). */
  redisPorts: number[];
  /** The nodes' Cassandra, when they run on one (its JVMs and their idle burn, for CPU per operation). */
  cassandra: ClusterCassandra | null;
  stop(): Promise<void>;
}

/** A Cassandra the bench runs (bench/lib/cassandra.ts) and lends to its clusters, one after the other. */
export interface ClusterCassandra {
  /** The nodes' store settings: the server, and a keyspace of this cluster's own. */
  store: Extract<ClusterStore, { driver: 'cassandra' }>;
  pids: readonly number[];
  /** Cores the JVMs burn with nothing to do, measured before any load. */
  idleCores: number;
}

export interface BenchClusterOptions {
  /** A Redis Cluster of 3 masters and 3 replicas instead of one redis-server. */
  redisCluster?: boolean;
  /** The IdP's fixture; default the demo fixture. */
  fixturePath?: string;
  /** The nodes' store: this Cassandra (started and stopped by the caller) instead of one shared SQLite file. */
  cassandra?: ClusterCassandra;
}

/**
 * Where cluster directories go: BENCH_CLUSTER_DIR, else tmpfs (/dev/shm) when there is one, so
 * the shared SQLite file's fsyncs and HAProxy's request log are not other people's disk traffic.
 */
function dirBase(): string {
  if (process.env.BENCH_CLUSTER_DIR) return process.env.BENCH_CLUSTER_DIR;
  return existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
}

/** SIGKILL, synchronously, every process the state file lists that still runs what it recorded. */
function killAll(dir: string): void {
  let state: ClusterState | null = null;
  try {
    state = readState(dir);
  } catch {
    return;
  }
  for (const p of Object.values(state?.procs ?? {})) {
    if (!runs(p.pid, p.marker)) continue;
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
}

function pin(pid: number, cpus: string, what: string): void {
  const r = spawnSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
  if (r.status !== 0) throw new BenchError(`taskset could not pin ${what} (pid ${pid}) to CPU ${cpus}: ${r.stderr.toString().trim()}`);
}

/**
 * Runs `fn` with process.env holding the bench's CHAT_* settings and no other CHAT_*; restores it
 * after. `BENCH_CHAT_<NAME>=value` sets `CHAT_<NAME>` for the nodes, as for a lone benched node
 * (chat-node.ts); the scenario's own settings win over them.
 */
async function withNodeEnv<T>(scenarioEnv: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const fromBench: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (name.startsWith('BENCH_CHAT_') && value !== undefined) fromBench[name.slice('BENCH_'.length)] = value;
  const extra = Object.assign(fromBench, scenarioEnv);
  const saved: Record<string, string | undefined> = {};
  for (const name of Object.keys(process.env)) if (name.startsWith('CHAT_')) saved[name] = process.env[name];
  for (const name of Object.keys({ ...BENCH_NODE_ENV, ...extra })) saved[name] = process.env[name];
  for (const name of Object.keys(saved)) delete process.env[name];
  Object.assign(process.env, BENCH_NODE_ENV, extra);
  try {
    return await fn();
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

/**
 * `extraEnv`: CHAT_* settings over the bench's (experiments, and scenario needs); `options`: a Redis
 * Cluster instead of one Redis, the IdP's fixture (the demo fixture unless a scenario generates users).
 */
export async function startBenchCluster(size: number, log: (line: string) => void, extraEnv: Record<string, string> = {}, options: BenchClusterOptions = {}): Promise<BenchCluster> {
  assertNotInterrupted();
  const dir = mkdtempSync(path.join(dirBase(), `bench-cluster-${size}-`));
  const cleanup = onExit(() => {
    killAll(dir);
    rmSync(dir, { recursive: true, force: true });
  });
  const stopNow = async (): Promise<void> => {
    try {
      if (readState(dir)) await stopCluster(dir, { log, stopLauncher: false });
    } finally {
      cleanup(); // SIGKILLs anything that outlived the stop, removes the directory
    }
  };
  try {
    const { state } = await withNodeEnv(extraEnv, () =>
      startCluster({
        root: REPO_ROOT,
        dir,
        nodes: size,
        port: 0,
        redisCluster: options.redisCluster ?? false,
        runtime: 'dist',
        fixturePath: options.fixturePath ?? path.join(REPO_ROOT, 'src/idp/demo-fixture.json'),
        launcherPid: null,
        log,
        // node-1 creates a fresh keyspace's schema before it is ready: tens of seconds when busy.
        readyTimeoutMs: options.cassandra ? CASSANDRA_READY_MS : 60_000,
        externalCassandra: options.cassandra?.store,
      }),
    );
    const pins = cpuPinning();
    if (pins) for (const [name, p] of Object.entries(state.procs)) pin(p.pid, pins.target, name);
    const pidOf = (name: string): number => {
      const p = state.procs[name];
      if (!p) throw new BenchError(`cluster: no ${name} in ${dir}/cluster.json`);
      return p.pid;
    };
    return {
      size,
      dir,
      lb: lbUrl(state.layout),
      lbPort: state.layout.lbPort,
      idp: idpUrl(state.layout),
      nodes: state.layout.nodes.map((n) => ({ ...n, pid: pidOf(n.id), origin: `http://127.0.0.1:${n.port}`, metricsUrl: `http://127.0.0.1:${n.metricsPort}/metrics` })),
      haproxyPid: pidOf('haproxy'),
      redisPid: pidOf(state.layout.redisCluster.length > 0 ? 'redis-1' : 'redis'),
      redisPorts: state.layout.redisCluster.length > 0 ? state.layout.redisCluster.map((r) => r.port) : [state.layout.redisPort],
      cassandra: options.cassandra ?? null,
      stop: stopNow,
    };
  } catch (err) {
    await stopNow().catch(() => undefined);
    throw err instanceof BenchError ? err : new BenchError(`cluster of ${size}: ${(err as Error).message}`);
  }
}
