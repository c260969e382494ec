/**
 * A Redis Cluster on loopback, for `npm run cluster -- up --redis-cluster` and the tests: N
 * `redis-server --cluster-enabled yes` processes (masters first, then replicas), joined by
 * `redis-cli --cluster create`, then waited for until every node reports the cluster ok and every
 * replica is in sync with its master (so that a failover can promote it at once).
 *
 * Settings chosen for a cluster whose masters may be killed in a test or a demo:
 * `cluster-node-timeout` short (a dead master is replaced within ~2-3 s), replicas allowed to
 * take over however long they were disconnected (`cluster-replica-validity-factor 0`), and
 * `cluster-require-full-coverage no`, so while one master is being replaced the other masters
 * keep serving their slots (with `yes` the whole cluster refuses every command meanwhile).
 */
import { execFile } from 'node:child_process';
import path from 'node:path';

export interface RedisClusterNode {
  port: number;
  /** The cluster bus port (node-to-node gossip). */
  busPort: number;
}

export interface RedisClusterOptions {
  /** Milliseconds before an unreachable node is considered failed; default 1000. */
  nodeTimeoutMs?: number;
}

/** The redis-server arguments of one node; it keeps its cluster state file in `dir`. */
export function redisClusterNodeArgs(node: RedisClusterNode, dir: string, o: RedisClusterOptions = {}): string[] {
  return [
    '--port', String(node.port),
    '--cluster-port', String(node.busPort),
    '--bind', '127.0.0.1',
    '--cluster-enabled', 'yes',
    '--cluster-config-file', path.join(dir, `nodes-${node.port}.conf`),
    '--cluster-node-timeout', String(o.nodeTimeoutMs ?? 1000),
    '--cluster-replica-validity-factor', '0',
    '--cluster-require-full-coverage', 'no',
    '--cluster-allow-reads-when-down', 'no',
    // Nothing on disk: a fresh cluster rebuilds membership, the bus window and rate limits.
    '--save', '',
    '--appendonly', 'no',
    '--dir', dir,
  ];
}

/** Runs redis-cli with `args`; resolves its stdout, rejects with its output on failure. */
export function redisCli(args: string[], timeoutMs = 30_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('redis-cli', args, { timeout: timeoutMs }, (error, stdout, stderr) => {
      if (error) reject(new Error(`redis-cli ${args.join(' ')} failed: ${error.message}\n${stdout}${stderr}`));
      else resolve(stdout);
    });
  });
}

/**
 * Joins running, empty nodes into one cluster: the first `nodes.length / (replicas + 1)` become
 * masters with the slots split evenly, the rest their replicas.
 */
export async function createRedisCluster(nodes: readonly RedisClusterNode[], replicasPerMaster: number): Promise<void> {
  if (nodes.length % (replicasPerMaster + 1) !== 0 || nodes.length / (replicasPerMaster + 1) < 3) {
    throw new Error(`a Redis Cluster needs at least 3 masters, and ${replicasPerMaster} replica(s) each (got ${nodes.length} nodes)`);
  }
  await redisCli(['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', String(replicasPerMaster), '--cluster-yes'], 60_000);
}

function field(info: string, name: string): string | undefined {
  return new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();
}

/** True when `port` reports the cluster ok, knowing `expected` nodes, and (a replica) its link up. */
export async function nodeReady(port: number, expected: number): Promise<boolean> {
  try {
    const info = await redisCli(['-p', String(port), 'cluster', 'info'], 2000);
    if (field(info, 'cluster_state') !== 'ok' || Number(field(info, 'cluster_known_nodes')) !== expected) return false;
    const replication = await redisCli(['-p', String(port), 'info', 'replication'], 2000);
    return field(replication, 'role') === 'master' || field(replication, 'master_link_status') === 'up';
  } catch {
    return false;
  }
}

/** Waits until every node is ready (see nodeReady). */
export async function waitRedisCluster(nodes: readonly RedisClusterNode[], timeoutMs = 30_000, signal?: AbortSignal): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (signal?.aborted) throw new Error('interrupted while waiting for the Redis Cluster');
    const ready = await Promise.all(nodes.map((n) => nodeReady(n.port, nodes.length)));
    if (ready.every(Boolean)) return;
    if (Date.now() > deadline) {
      const late = nodes.filter((_, i) => !ready[i]).map((n) => n.port);
      throw new Error(`the Redis Cluster was not ready within ${Math.round(timeoutMs / 1000)} s (not ready: ${late.join(', ')})`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** `host:port` of every node, masters first: the seeds a client is given. */
export const clusterSeeds = (nodes: readonly RedisClusterNode[]): string[] => nodes.map((n) => `127.0.0.1:${n.port}`);
