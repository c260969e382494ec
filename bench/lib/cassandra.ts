/**
 * The Cassandra a benchmark measures, and the JVM whose CPU it charges per operation.
 *
 * By default a node of its own (the runner, cluster/cassandra: Apache Cassandra 5.0 from Maven
 * Central's jars, 512 MB heap, in a fresh directory on tmpfs when there is one, so that its
 * commit log and flushes are not other people's disk traffic nor wait on it), stopped after the
 * scenario (and SIGKILLed if the bench dies: the runner's owned JVMs);
 * BENCH_CASSANDRA_NODES=3 for a ring of three (127.0.0.1-3). Starting takes 15 s to a few
 * minutes on a busy 2-core machine.
 * BENCH_CASSANDRA_CONTACT_POINTS=host:port[,...] uses a running server instead; its JVMs are found
 * by the CQL port each listens on (/proc/net/tcp6 + /proc/<pid>/fd; loopback servers only), or
 * given as BENCH_CASSANDRA_PIDS=pid[,...]. A server shared with other work makes its CPU figures
 * an upper bound: say so next to them.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import cassandra from 'cassandra-driver';
import { startCassandra } from '../../cluster/cassandra/runner.ts';
import type { ClusterStore } from '../../cluster/lib/state.ts';
import { cpuSeconds } from '../fanout-proc.ts';
import { BenchError } from './errors.ts';
import { cpuPinning, onExit } from './processes.ts';

export interface BenchCassandra {
  contactPoints: string[];
  localDataCenter: string;
  /** The server's JVMs (one per node). */
  pids: number[];
  /**
   * `nodetool <args>` against node 0 over its local JMX port (flush, compact, tablestats): only for
   * a node this module started; null for an external server (its JMX port is not known here).
   */
  nodetool: ((args: string[]) => Promise<string>) | null;
  /** A server the bench did not start (BENCH_CASSANDRA_CONTACT_POINTS): not pinned, not stopped. */
  external: boolean;
  /** Stops what this module started (nothing for an external server). */
  stop(): Promise<void>;
}

export async function benchCassandra(log: (line: string) => void): Promise<BenchCassandra> {
  const given = (process.env.BENCH_CASSANDRA_CONTACT_POINTS ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  if (given.length === 0) return ownCassandra(log);
  const pids = process.env.BENCH_CASSANDRA_PIDS
    ? process.env.BENCH_CASSANDRA_PIDS.split(',').map((s) => Number(s.trim()))
    : given.map((point) => {
        const port = Number(point.split(':')[1] ?? 9042);
        const pid = pidListeningOn(port);
        if (pid === null) throw new BenchError(`no process of this machine listens on port ${port}; set BENCH_CASSANDRA_PIDS`);
        return pid;
      });
  log(`cassandra: external ${given.join(',')} (JVM pids ${pids.join(',')})`);
  return { contactPoints: given, localDataCenter: process.env.BENCH_CASSANDRA_LOCAL_DC ?? 'datacenter1', pids, nodetool: null, external: true, stop: async () => {} };
}

async function ownCassandra(log: (line: string) => void): Promise<BenchCassandra> {
  const nodes = process.env.BENCH_CASSANDRA_NODES === '3' ? 3 : 1;
  const dataDir = mkdtempSync(path.join(existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), 'bench-cassandra-'));
  const removeDir = onExit(() => rmSync(dataDir, { recursive: true, force: true }));
  const t0 = Date.now();
  let ring;
  try {
    ring = await startCassandra({ nodes, dataDir, stopGraceMs: 5000, log: (line) => log(`cassandra: ${line}`), extraJvmArgs: nodes === 3 ? ['-Dcassandra.ring_delay_ms=5000'] : [] });
  } catch (err) {
    removeDir();
    throw new BenchError(`Cassandra could not start: ${(err as Error).message.split('\n')[0]}`);
  }
  const pids = ring.nodes.map((n) => n.pid).filter((p): p is number => p !== null);
  log(`cassandra: ${nodes} node(s) of our own up in ${Math.round((Date.now() - t0) / 1000)} s at ${ring.contactPoints.join(',')} (JVM pids ${pids.join(',')})`);
  return {
    contactPoints: ring.contactPoints,
    localDataCenter: ring.localDataCenter,
    pids,
    nodetool: (args) => ring.nodetool(0, args),
    external: false,
    stop: async () => {
      await ring.stop();
      removeDir();
    },
  };
}

/** CPU seconds (user + system) the JVMs have used so far. */
export function jvmCpuSeconds(pids: readonly number[]): number {
  let total = 0;
  for (const pid of pids) {
    const c = cpuSeconds(pid);
    if (c.user < 0) throw new BenchError(`cannot read /proc/${pid}/stat (the Cassandra JVM is gone?)`);
    total += c.user + c.system;
  }
  return total;
}

/** Cores the JVMs use with no load from us (a few seconds of nothing): gossip, compaction, GC of nothing. */
export async function idleCores(pids: readonly number[], seconds: number): Promise<number> {
  const jvm0 = jvmCpuSeconds(pids);
  const t0 = performance.now();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  return (jvmCpuSeconds(pids) - jvm0) / ((performance.now() - t0) / 1000);
}

/** CPU seconds the JVMs used over a phase: as read, and net of their idle burn over its length. */
export interface JvmCpu {
  seconds: number;
  raw: number;
  net: number;
}

/**
 * The JVMs' CPU over phases, net of what they burn idle (measured once, before any load: at the
 * rates a loaded 2-core machine reaches, that background is a large share of a raw figure).
 */
export class CassandraCpu {
  private jvm0 = 0;
  private t0 = 0;

  private constructor(
    private readonly pids: readonly number[],
    /** Cores the JVMs burn with nothing to do. */
    readonly idle: number,
  ) {}

  static async measure(c: BenchCassandra, idleSeconds: number, log: (line: string) => void): Promise<CassandraCpu> {
    const idle = await idleCores(c.pids, idleSeconds);
    log(`cassandra idle: ${(idle * 100).toFixed(1)}% of a core (over ${idleSeconds} s)`);
    return new CassandraCpu(c.pids, idle);
  }

  start(): void {
    this.jvm0 = jvmCpuSeconds(this.pids);
    this.t0 = performance.now();
  }

  read(): JvmCpu {
    const seconds = (performance.now() - this.t0) / 1000;
    const raw = jvmCpuSeconds(this.pids) - this.jvm0;
    return { seconds, raw, net: Math.max(0, raw - this.idle * seconds) };
  }
}

/**
 * Pins every thread of the JVMs to `cpus` (taskset -a; threads started later inherit it), as the
 * benches pin the processes under test: the server side keeps its CPU, the load generators theirs.
 */
export function pinJvms(c: BenchCassandra, cpus: string): void {
  for (const pid of c.pids) {
    const r = spawnSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
    if (r.status !== 0) throw new BenchError(`taskset could not pin the Cassandra JVM (pid ${pid}) to CPU ${cpus}: ${r.stderr.toString().trim()}`);
  }
}

/** What a scenario measures a Cassandra-backed load with. */
export interface MeasuredCassandra {
  server: BenchCassandra;
  cpu: CassandraCpu;
}

const IDLE_SECONDS = 5;

/**
 * Runs `fn` with a Cassandra (benchCassandra: by default a node of our own), stopped after it
 * however it ends. A JVM of our own is pinned to the CPUs of the processes under test, beside
 * the node(s) it serves, and its idle burn is measured before `fn` loads it.
 */
export async function usingCassandra<T>(log: (line: string) => void, fn: (c: MeasuredCassandra) => Promise<T>): Promise<T> {
  const server = await benchCassandra(log);
  try {
    const pins = cpuPinning();
    if (pins && !server.external) {
      pinJvms(server, pins.target);
      log(`cassandra: JVM pinned to CPU ${pins.target}, beside the processes it serves`);
    }
    return await fn({ server, cpu: await CassandraCpu.measure(server, IDLE_SECONDS, log) });
  } finally {
    await server.stop();
  }
}

/** The store settings of chat nodes on this server: a keyspace of their own, one replica per node up to 3. */
export function cassandraStore(c: BenchCassandra, keyspace: string): Extract<ClusterStore, { driver: 'cassandra' }> {
  return { driver: 'cassandra', contactPoints: c.contactPoints, localDataCenter: c.localDataCenter, keyspace, replicationFactor: Math.min(3, c.pids.length) };
}

/** Drops a keyspace the bench created (a fresh one per run keeps runs comparable). */
export async function dropKeyspace(c: BenchCassandra, keyspace: string): Promise<void> {
  const client = new cassandra.Client({ contactPoints: c.contactPoints, localDataCenter: c.localDataCenter });
  try {
    await client.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`);
  } finally {
    await client.shutdown();
  }
}

/** The pid holding a listening TCP socket on `port` (any address), or null. */
export function pidListeningOn(port: number): number | null {
  const inodes = new Set<string>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address is ADDR:PORT in hex; state 0A is LISTEN; the inode is field 9.
      if (f.length > 9 && f[3] === '0A' && parseInt(f[1]!.split(':')[1] ?? '', 16) === port) inodes.add(f[9]!);
    }
  }
  if (inodes.size === 0) return null;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${entry}/fd/${fd}`));
        if (m && inodes.has(m[1]!)) return Number(entry);
      } catch {
        // the descriptor closed meanwhile
      }
    }
  }
  return null;
}
