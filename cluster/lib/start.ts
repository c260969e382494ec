/**
 * Bringing a loopback cluster up: Cassandra (with --store cassandra), Redis, the IdP, the nodes,
 * then HAProxy in front; each waited for before the next, because each needs the one before it
 * (nodes open their store, read the IdP's discovery and register in Redis at start; HAProxy is
 * only useful once a node is ready). Any failure stops what was started and reports the failing
 * process's last log lines.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ensureBuilt } from './build.ts';
import { haproxyCfgFile, haproxySpec, idpSpec, nodeSpec, redisClusterSpec, redisSpec, type ProcSpec } from './specs.ts';
import { createRedisCluster, waitRedisCluster } from './redis-cluster.ts';
import { busyPorts, planLayout } from './layout.ts';
import { renderHaproxyConfig, checkHaproxyConfig } from './haproxy.ts';
import { isAlive, runs, spawnLogged, tail } from './procs.ts';
import { waitUntil } from './probes.ts';
import { loadOrCreateSecrets, type ClusterSecrets } from './secrets.ts';
import { assertClusterTools } from './tools.ts';
import { readState, writeState, type ClusterState, type ClusterStore, type Runtime } from './state.ts';
import { startCassandra } from '../cassandra/runner.ts';
import { stopCluster } from './stop.ts';

export interface StartOptions {
  root: string;
  dir: string;
  nodes: number;
  /** The load balancer's port; 0: every port picked at random (tests). */
  port: number;
  /** A Redis Cluster of 3 masters and 3 replicas instead of one redis-server. */
  redisCluster?: boolean;
  runtime: Runtime;
  fixturePath: string;
  /** The pid recorded as the launcher (the foreground `up`); null when used as a library. */
  launcherPid: number | null;
  log: (line: string) => void;
  /** Per process; nodes of a fresh SQLite file need a few seconds on a busy machine. */
  readyTimeoutMs?: number;
  /** Ctrl-C during the start: stop waiting, stop what was started. */
  signal?: AbortSignal;
  /** The nodes' store (default sqlite: one shared file). */
  store?: 'sqlite' | 'cassandra';
  /** --store cassandra: one Cassandra node, or a ring of 3 (replication factor = this). */
  cassandraNodes?: 1 | 3;
  /**
   * A Cassandra that runs already (a bench's, shared by the clusters it starts one after the
   * other): the nodes use it, in this keyspace; the launcher neither starts nor stops it.
   */
  externalCassandra?: Extract<ClusterStore, { driver: 'cassandra' }>;
}

/** Refuses a directory whose cluster still runs: two clusters on one data dir would corrupt it. */
function assertNotRunning(dir: string): void {
  const old = readState(dir);
  if (!old) return;
  const running = Object.entries(old.procs).filter(([, p]) => runs(p.pid, p.marker)).map(([n]) => n);
  if ((old.launcherPid !== null && isAlive(old.launcherPid)) || running.length > 0) {
    throw new Error(`a cluster still runs from ${dir} (${running.join(', ') || `launcher ${old.launcherPid}`}): stop it with \`npm run cluster -- down --dir ${dir}\``);
  }
}

export async function startProc(state: ClusterState, spec: ProcSpec, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) throw new Error(`interrupted before starting ${spec.name}`);
  const pid = spawnLogged(spec);
  state.procs[spec.name] = { pid, marker: spec.marker, log: spec.logFile };
  writeState(state);
  try {
    await waitUntil(spec.name, spec.ready, () => isAlive(pid), timeoutMs, signal);
  } catch (err) {
    throw new Error(`${(err as Error).message}; last lines of ${spec.logFile}:\n${tail(spec.logFile)}`);
  }
}

export async function startCluster(o: StartOptions): Promise<{ state: ClusterState; secrets: ClusterSecrets }> {
  assertClusterTools();
  const dir = path.resolve(o.dir);
  const timeout = o.readyTimeoutMs ?? 60_000;
  fs.mkdirSync(dir, { recursive: true });
  assertNotRunning(dir);
  for (const sub of ['logs', 'data', 'redis', 'pids']) fs.mkdirSync(path.join(dir, sub), { recursive: true });
  const storeKind = o.externalCassandra ? 'cassandra' : (o.store ?? 'sqlite');
  // The layout reserves a CQL port only for a Cassandra the launcher starts itself.
  const layout = await planLayout(dir, o.port, o.nodes, o.redisCluster ?? false, o.externalCassandra ? 'sqlite' : storeKind);
  const busy = await busyPorts(layout);
  if (busy.length > 0) throw new Error(`ports already in use: ${busy.join(', ')}; pick another base with --port`);
  const secrets = loadOrCreateSecrets(dir);
  if (o.runtime === 'dist') ensureBuilt(o.root, o.log);

  const cfg = haproxyCfgFile(layout);
  fs.writeFileSync(
    cfg,
    renderHaproxyConfig({
      bind: `127.0.0.1:${layout.lbPort}`,
      statsBind: `127.0.0.1:${layout.statsPort}`,
      backends: layout.nodes.map((n) => ({ name: n.id, address: `127.0.0.1:${n.port}` })),
      idp: { name: 'idp', address: `127.0.0.1:${layout.idpPort}` },
    }),
  );
  const check = await checkHaproxyConfig(cfg);
  if (!check.ok) throw new Error(`haproxy rejects ${cfg}:\n${check.output}`);

  const state: ClusterState = { version: 1, root: o.root, runtime: o.runtime, launcherPid: o.launcherPid, startedAt: new Date().toISOString(), fixturePath: path.resolve(o.fixturePath), layout, store: { driver: 'sqlite' }, procs: {} };
  writeState(state);
  try {
    if (o.externalCassandra) state.store = o.externalCassandra;
    else if (storeKind === 'cassandra') state.store = await startClusterCassandra(state, o);
    if (layout.redisCluster.length > 0) await startRedisCluster(state, timeout, o);
    else {
      o.log(`starting redis on ${layout.redisPort}`);
      await startProc(state, redisSpec(layout), timeout, o.signal);
    }
    o.log(`starting the IdP on ${layout.idpPort}`);
    await startProc(state, idpSpec(state), timeout, o.signal);
    // node-1 alone first: it creates the SQLite schema; the others then open a ready file
    // instead of racing to migrate it.
    const [first, ...rest] = layout.nodes;
    if (first) {
      o.log(`starting ${first.id} on ${first.port}`);
      await startProc(state, nodeSpec(state, secrets, first.index), timeout, o.signal);
    }
    if (rest.length > 0) o.log(`starting ${rest.map((n) => n.id).join(', ')}`);
    await Promise.all(rest.map((n) => startProc(state, nodeSpec(state, secrets, n.index), timeout, o.signal)));
    o.log(`starting haproxy on ${layout.lbPort}`);
    await startProc(state, haproxySpec(layout), timeout, o.signal);
  } catch (err) {
    o.log('start failed; stopping what was started');
    await stopCluster(dir, { log: o.log, stopLauncher: false });
    throw err;
  }
  return { state, secrets };
}

/** The Redis Cluster's processes, then `redis-cli --cluster create`, then until every node is in sync. */
async function startRedisCluster(state: ClusterState, timeout: number, o: StartOptions): Promise<void> {
  const layout = state.layout;
  // Nothing is persisted: a cluster state file left by an earlier run would make the nodes
  // refuse to be joined again.
  const redisDir = path.join(layout.dir, 'redis');
  for (const f of fs.readdirSync(redisDir)) if (/^nodes-\d+\.conf$/.test(f)) fs.rmSync(path.join(redisDir, f));
  o.log(`starting a Redis Cluster on ${layout.redisCluster.map((r) => r.port).join(', ')} (3 masters, then their replicas)`);
  await Promise.all(layout.redisCluster.map((_, k) => startProc(state, redisClusterSpec(layout, k), timeout, o.signal)));
  await createRedisCluster(layout.redisCluster, layout.redisCluster.length / 3 - 1);
  await waitRedisCluster(layout.redisCluster, timeout, o.signal);
}

/**
 * The cluster's Cassandra (cluster/cassandra): its data in `<dir>/cassandra`, kept between runs
 * like the SQLite file. It belongs to this process (it dies with it, even SIGKILLed), except on
 * Ctrl-C: the launcher then stops the nodes first, which drain into their store, and Cassandra
 * last (stop.ts), from the pids recorded here as `cassandra-<i>`.
 */
async function startClusterCassandra(state: ClusterState, o: StartOptions): Promise<ClusterStore> {
  const count = o.cassandraNodes ?? 1;
  o.log(`starting Cassandra (${count} node${count === 1 ? '' : 's'}; the first start of a directory also fetches its jars)`);
  const c = await startCassandra({
    nodes: count,
    dataDir: path.join(state.layout.dir, 'cassandra'),
    nativePort: state.layout.cassandraPort ?? 0,
    owned: true,
    killOnSignal: false,
    log: o.log,
  });
  for (const n of c.nodes) {
    if (n.pid !== null) state.procs[`cassandra-${n.index + 1}`] = { pid: n.pid, marker: n.marker, log: n.logFile };
  }
  state.layout.cassandraPort = c.nodes[0]!.nativePort;
  writeState(state);
  return { driver: 'cassandra', contactPoints: c.contactPoints, localDataCenter: c.localDataCenter, keyspace: 'chat', replicationFactor: count };
}
