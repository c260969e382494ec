/**
 * What the `cluster` bench reads of a running cluster: each node's Prometheus counters (where
 * conversation operations ran, streams open, events written) and the CPU time every process of
 * the cluster used over a phase (/proc/<pid>/stat), so that costs come out per operation.
 */
import { cpuSeconds, MachineMeter } from '../fanout-proc.ts';
import type { BenchCluster } from './cluster-up.ts';
import { BenchError } from './errors.ts';

/** The counters and gauges the bench reads, per node. */
export interface NodeCounters {
  local: number;
  forwarded: number;
  retried: number;
  unavailable: number;
  clusterNodes: number;
  streamsOpen: number;
  eventsWritten: number;
}

/** The value of a sample `name{labels} value` (labels as written, e.g. `outcome="local"`), or 0. */
export function sample(text: string, name: string, labels = ''): number {
  const head = labels ? `${name}{${labels}} ` : `${name} `;
  for (const line of text.split('\n')) if (line.startsWith(head)) return Number(line.slice(head.length).trim().split(' ')[0]);
  return 0;
}

export async function scrape(url: string): Promise<NodeCounters> {
  const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
  const text = await res.text();
  if (res.status !== 200) throw new BenchError(`GET ${url} answered ${res.status}`);
  const calls = (outcome: string): number => sample(text, 'chat_actor_calls_total', `outcome="${outcome}"`);
  return {
    local: calls('local'),
    forwarded: calls('forwarded'),
    retried: calls('retried'),
    unavailable: calls('unavailable'),
    clusterNodes: sample(text, 'chat_cluster_nodes'),
    streamsOpen: sample(text, 'chat_realtime_streams_open'),
    eventsWritten: sample(text, 'chat_realtime_events_written_total'),
  };
}

export const scrapeAll = (cluster: BenchCluster): Promise<NodeCounters[]> => Promise.all(cluster.nodes.map((n) => scrape(n.metricsUrl)));

/** Counter differences, summed over the nodes. */
export function callsBetween(before: NodeCounters[], after: NodeCounters[]): { local: number; forwarded: number; retried: number; unavailable: number; eventsWritten: number } {
  const d = (k: keyof NodeCounters): number => after.reduce((sum, a, i) => sum + a[k] - (before[i]?.[k] ?? 0), 0);
  return { local: d('local'), forwarded: d('forwarded'), retried: d('retried'), unavailable: d('unavailable'), eventsWritten: d('eventsWritten') };
}

/** CPU seconds (user + system) used over a phase, per process of the cluster. */
export interface CpuUse {
  seconds: number;
  /** Per node, in the cluster's node order. */
  nodes: number[];
  haproxy: number;
  redis: number;
  /** The Cassandra JVMs, when the nodes run on Cassandra (0 otherwise)... */
  cassandra: number;
  /** ...and the same less what they burn idle over the phase. */
  cassandraNet: number;
  /** Busy share of each CPU of the machine (every process, other people's included). */
  cpus: number[];
}

export const nodesCpu = (u: CpuUse): number => u.nodes.reduce((a, b) => a + b, 0);

export class ClusterCpu {
  private t0 = 0;
  private start0: number[] = [];
  private readonly machine = new MachineMeter();

  constructor(private readonly cluster: BenchCluster) {}

  private pids(): number[] {
    return [...this.cluster.nodes.map((n) => n.pid), this.cluster.haproxyPid, this.cluster.redisPid, ...(this.cluster.cassandra?.pids ?? [])];
  }

  private static read(pid: number): number {
    const c = cpuSeconds(pid);
    if (c.user < 0) throw new BenchError(`cannot read /proc/${pid}/stat (the process is gone, or this is not Linux)`);
    return c.user + c.system;
  }

  start(): void {
    this.start0 = this.pids().map(ClusterCpu.read);
    this.machine.start();
    this.t0 = performance.now();
  }

  read(): CpuUse {
    const used = this.pids().map((pid, i) => ClusterCpu.read(pid) - this.start0[i]!);
    const n = this.cluster.nodes.length;
    const seconds = (performance.now() - this.t0) / 1000;
    const cassandra = used.slice(n + 2).reduce((a, b) => a + b, 0);
    const idle = (this.cluster.cassandra?.idleCores ?? 0) * seconds;
    return { seconds, nodes: used.slice(0, n), haproxy: used[n]!, redis: used[n + 1]!, cassandra, cassandraNet: Math.max(0, cassandra - idle), cpus: this.machine.read() };
  }
}

/** `CPUs busy 97% 41%`, for the log: tells a saturated cluster from a starved one. */
export const busy = (u: CpuUse): string => `CPUs busy ${u.cpus.map((c) => `${Math.round(c * 100)}%`).join(' ')}`;
