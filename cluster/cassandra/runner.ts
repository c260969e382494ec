/**
 * Apache Cassandra on loopback, from Maven Central's jars: one node, or a ring of three on
 * 127.0.0.1-3. The module API for tests, benches and the cluster launcher; the CLI
 * (`npm run cassandra`) is cluster/cassandra/cli.ts.
 *
 *   const c = await startCassandra({ nodes: 1, dataDir });
 *   createStore({ driver: 'cassandra', contactPoints: c.contactPoints, localDataCenter: c.localDataCenter, ... });
 *   await c.kill(1); await c.start(1);   // a crash and a restart of node 1 on its data and ports
 *   await c.stop();                       // every JVM gone when it resolves
 *
 * Nodes start one after the other (joining nodes learn the ring from the seed, node 0); each is
 * ready when CQL answers on it and, in a ring, every running node sees it up and it sees them.
 * A JVM started here dies with the process that started it (jvms.ts), unless `owned: false`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { JVM17_MODULE_OPTIONS, jvmArgs, LOCAL_DATA_CENTER, logFile, renderLogback, renderYaml, yamlFile, type NodePlan } from './config.ts';
import { ensureJars, type CassandraJars } from './jars.ts';
import { findJava17 } from './java.ts';
import { isAlive, runs, spawnJvm, stopJvm, tail } from './jvms.ts';
import { planNodes, writeState, type CassandraState, type NodeState } from './plan.ts';
import { ensureProbeKeyspace, notSeen, releaseVersion } from './probes.ts';

export { LOCAL_DATA_CENTER } from './config.ts';
export { CASSANDRA_VERSION, ensureJars } from './jars.ts';

export interface StartCassandraOptions {
  /** 1 (default) or 3 (a ring on 127.0.0.1, .2, .3). */
  nodes?: 1 | 3;
  /** Every node's files go to `<dataDir>/node<i>`; the state file to `<dataDir>/cassandra.json`. */
  dataDir: string;
  /** The CQL port of every node; default: one free on every node's address. */
  nativePort?: number;
  /** Heap per node (default 512). */
  heapMb?: number;
  /** Per node (default 180 s: a 2-core machine shared with other work starts a node in 10-40 s). */
  readyTimeoutMs?: number;
  /** Grace of a SIGTERM before SIGKILL in stop()/stopNode() (default 20 s). */
  stopGraceMs?: number;
  /** More JVM options (before the main class); CASSANDRA_JVM_OPTS (space-separated) adds to them. */
  extraJvmArgs?: string[];
  /**
   * true: schema changes are not flushed to disk as they happen (a fresh keyspace 5x faster), for
   * nodes that are never killed and restarted on their data (test files). Default false: a node
   * must come back after a crash with its schema (rings whose nodes restart, the CLI, benches).
   */
  fastSchema?: boolean;
  /** false: the JVMs outlive this process (the CLI's `up`); default true: they die with it. */
  owned?: boolean;
  /**
   * Owned JVMs die at once on this process's SIGINT/SIGTERM/SIGHUP (default true). False when
   * the process handles those signals and stops Cassandra itself, last (the cluster launcher).
   */
  killOnSignal?: boolean;
  log?: (line: string) => void;
}

export interface CassandraNode {
  /** 0-based, as kill(i)/start(i) take it. */
  readonly index: number;
  readonly address: string;
  readonly nativePort: number;
  readonly storagePort: number;
  readonly jmxPort: number;
  readonly dir: string;
  readonly logFile: string;
  /** A string only this node's JVM command line holds (its yaml path): a recorded pid is checked against it. */
  readonly marker: string;
  /** The JVM's pid while it runs, null while stopped or killed. */
  readonly pid: number | null;
}

export interface CassandraCluster {
  /** `address:port` of every node, for cassandra-driver and CHAT_CASSANDRA_CONTACT_POINTS. */
  readonly contactPoints: string[];
  /** `datacenter1` (SimpleSnitch). */
  readonly localDataCenter: string;
  readonly dataDir: string;
  readonly nodes: readonly CassandraNode[];
  /** SIGKILL node i (a crash: no drain, no flush); resolves once the JVM is gone. */
  kill(i: number): Promise<void>;
  /** SIGTERM node i (drain), SIGKILL after the grace. */
  stopNode(i: number): Promise<void>;
  /** (Re)starts node i on its data and ports; resolves once it is up and the running nodes see it. */
  start(i: number): Promise<void>;
  /** `nodetool <args>` against node i over its local JMX port (flush, compactionstats, tablestats...). */
  nodetool(i: number, args: string[]): Promise<string>;
  /** Stops every node (SIGTERM, SIGKILL after the grace); nothing runs when it resolves. */
  stop(): Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** CPU seconds a process used so far (user + system, from /proc). */
export function cpuSeconds(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
  } catch {
    return 0;
  }
}

class Ring implements CassandraCluster {
  readonly contactPoints: string[];
  readonly localDataCenter = LOCAL_DATA_CENTER;
  readonly dataDir: string;
  readonly nodes: NodeState[];
  private readonly heapMb: number;
  private readonly fastSchema: boolean;
  private readonly extraJvmArgs: string[];
  private readonly readyTimeoutMs: number;
  private readonly graceMs: number;
  private readonly owned: boolean;
  private readonly killOnSignal: boolean;
  private readonly log: (line: string) => void;

  constructor(
    plans: NodePlan[],
    options: StartCassandraOptions,
    private readonly java: string,
    private readonly jars: CassandraJars,
  ) {
    this.dataDir = path.resolve(options.dataDir);
    this.nodes = plans.map((p) => ({ pid: null, marker: yamlFile(p), logFile: logFile(p), ...p }));
    this.contactPoints = plans.map((p) => `${p.address}:${p.nativePort}`);
    this.heapMb = options.heapMb ?? 512;
    this.fastSchema = options.fastSchema ?? false;
    this.extraJvmArgs = [...(options.extraJvmArgs ?? []), ...(process.env.CASSANDRA_JVM_OPTS ?? '').split(/\s+/).filter(Boolean)];
    this.readyTimeoutMs = options.readyTimeoutMs ?? 180_000;
    this.graceMs = options.stopGraceMs ?? 20_000;
    this.owned = options.owned ?? true;
    this.killOnSignal = options.killOnSignal ?? true;
    this.log = options.log ?? (() => {});
    for (const n of this.nodes) {
      for (const sub of ['data', 'commitlog', 'saved_caches', 'hints', 'cdc_raw', 'logs']) fs.mkdirSync(path.join(n.dir, sub), { recursive: true });
      fs.writeFileSync(yamlFile(n), renderYaml(n, this.nodes[0]!));
      fs.writeFileSync(path.join(n.dir, 'logback.xml'), renderLogback());
    }
  }

  private node(i: number): NodeState {
    const n = this.nodes[i];
    if (!n) throw new RangeError(`no Cassandra node ${i}: this ring has nodes 0 to ${this.nodes.length - 1}`);
    return n;
  }

  private save(): void {
    const state: CassandraState = {
      version: 1,
      cassandraVersion: this.jars.version,
      dataDir: this.dataDir,
      contactPoints: this.contactPoints,
      localDataCenter: this.localDataCenter,
      ownerPid: this.owned ? process.pid : null,
      nodes: this.nodes,
    };
    writeState(state);
  }

  private running(n: NodeState): boolean {
    return n.pid !== null && runs(n.pid, n.marker);
  }

  async start(i: number): Promise<void> {
    const n = this.node(i);
    if (this.running(n)) throw new Error(`Cassandra node ${i} already runs (pid ${n.pid})`);
    const started = Date.now();
    const args = jvmArgs(n, { lib: this.jars.lib, jamm: this.jars.jamm, heapMb: this.heapMb, extra: this.extraJvmArgs, flushSchema: !this.fastSchema });
    const pid = spawnJvm({ java: this.java, args, cwd: n.dir, logFile: n.logFile, marker: n.marker, owned: this.owned, killOnSignal: this.killOnSignal });
    n.pid = pid;
    this.save();
    const deadline = started + this.readyTimeoutMs;
    const fail = (why: string): Error => new Error(`Cassandra node ${i} (${n.address}:${n.nativePort}) ${why}; last lines of ${n.logFile}:\n${tail(n.logFile)}`);
    // CQL first, polled; a JVM that exits (bad option, port taken) fails at once.
    while ((await releaseVersion(n)) === null) {
      if (!isAlive(pid)) throw fail('exited before CQL answered');
      if (Date.now() > deadline) throw fail(`did not answer CQL within ${Math.round(this.readyTimeoutMs / 1000)} s`);
      await sleep(250);
    }
    if (i === 0) await ensureProbeKeyspace(n);
    // Then, in a ring, the running nodes and this one must see each other up.
    const others = this.nodes.filter((o) => o !== n && this.running(o));
    for (;;) {
      const pending = (await Promise.all(others.flatMap((o) => [notSeen(o, n), notSeen(n, o)]))).filter((x): x is string => x !== null);
      if (pending.length === 0) break;
      if (!isAlive(pid)) throw fail('exited while joining the ring');
      if (Date.now() > deadline) throw fail(`was not seen up by the ring within ${Math.round(this.readyTimeoutMs / 1000)} s (${pending.join('; ')})`);
      await sleep(250);
    }
    this.log(`cassandra node ${i} up on ${n.address}:${n.nativePort} in ${((Date.now() - started) / 1000).toFixed(1)} s, ${cpuSeconds(pid).toFixed(1)} s of CPU (pid ${pid})`);
  }

  private async halt(i: number, graceMs: number): Promise<void> {
    const n = this.node(i);
    if (n.pid === null) return;
    const result = await stopJvm(n.pid, n.marker, graceMs);
    this.log(`cassandra node ${i} (pid ${n.pid}) ${result}`);
    n.pid = null;
    this.save();
  }

  kill(i: number): Promise<void> {
    return this.halt(i, 0);
  }

  stopNode(i: number): Promise<void> {
    return this.halt(i, this.graceMs);
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => this.halt(n.index, this.graceMs)));
  }

  async nodetool(i: number, args: string[]): Promise<string> {
    const n = this.node(i);
    const { stdout } = await promisify(execFile)(
      this.java,
      // The tool's JVM needs the server's module options too (its FileUtils opens JDK internals).
      ['-Xmx128m', ...JVM17_MODULE_OPTIONS, `-Dlogback.configurationFile=${path.join(n.dir, 'logback.xml')}`, '-cp', `${this.jars.lib}/*`, 'org.apache.cassandra.tools.NodeTool', '-h', '127.0.0.1', '-p', String(n.jmxPort), ...args],
      { maxBuffer: 16 * 1024 * 1024, timeout: 120_000 },
    );
    return stdout;
  }
}

/**
 * Starts Cassandra: finds Java 17 (throws one line otherwise), fetches the jars if the cache
 * lacks them, writes each node's yaml, starts the nodes in order and waits for each. On any
 * failure, stops what it started and throws (with the failing node's last log lines).
 */
export async function startCassandra(options: StartCassandraOptions): Promise<CassandraCluster> {
  const count = options.nodes ?? 1;
  const java = findJava17();
  const jars = await ensureJars(options.log);
  const dataDir = path.resolve(options.dataDir);
  fs.mkdirSync(dataDir, { recursive: true });
  const ring = new Ring(await planNodes(dataDir, count, options.nativePort), options, java, jars);
  try {
    for (let i = 0; i < count; i += 1) await ring.start(i);
  } catch (err) {
    await ring.stop();
    throw err;
  }
  return ring;
}
