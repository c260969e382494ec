/**
 * Where every process of a loopback cluster listens. With a base port P (the load balancer's):
 *
 *   P        load balancer (HAProxy)          P+100+i  node i's public port
 *   P+1      HAProxy stats page               P+200+i  node i's internal (node-to-node) port
 *   P+2      IdP                              P+300+i  node i's metrics port
 *   P+3      Redis
 *   P+3+k    Redis Cluster node k (0-5: 3 masters, then their replicas; --redis-cluster), its
 *            cluster bus on P+10003+k
 *   P+20     Cassandra's CQL (--store cassandra; its other ports are picked free)
 *
 * Fixed offsets rather than random ports so the URLs in the docs and in a demo stay the same
 * from one run to the next. Base port 0 picks every port at random instead (tests, CI).
 */
import { freePort, isPortFree } from './ports.ts';
import type { RedisClusterNode } from './redis-cluster.ts';

export const MAX_NODES = 99;

export interface NodeLayout {
  index: number;
  /** `node-<index>`: stable across restarts, so a restarted node gets its conversations back. */
  id: string;
  port: number;
  internalPort: number;
  metricsPort: number;
}

export interface ClusterLayout {
  /** The cluster directory (absolute): state, secrets, logs, the shared SQLite data. */
  dir: string;
  lbPort: number;
  statsPort: number;
  idpPort: number;
  redisPort: number;
  /** The nodes of a Redis Cluster (masters first), instead of the one Redis on redisPort; empty without. */
  redisCluster: RedisClusterNode[];
  /** --store cassandra: the CQL port of every Cassandra node (0: picked at start); null: no Cassandra. */
  cassandraPort?: number | null;
  nodes: NodeLayout[];
}

/** Nodes of the loopback Redis Cluster: 3 masters and a replica each. */
export const REDIS_CLUSTER_NODES = 6;

export async function planLayout(dir: string, basePort: number, nodeCount: number, redisCluster = false, store: 'sqlite' | 'cassandra' = 'sqlite'): Promise<ClusterLayout> {
  if (!Number.isInteger(nodeCount) || nodeCount < 1 || nodeCount > MAX_NODES) throw new Error(`--nodes must be from 1 to ${MAX_NODES} (got ${nodeCount})`);
  const top = redisCluster ? Math.max(300 + nodeCount, 10_003 + REDIS_CLUSTER_NODES - 1) : 300 + nodeCount;
  if (basePort !== 0 && (basePort < 1 || basePort + top > 65535)) throw new Error(`--port must be 0 or leave room for port+${top} (got ${basePort})`);
  // Ports the kernel hands out one at a time can repeat (a port freed a moment ago is handed out
  // again): with --port 0 each pick skips the ports this layout already holds.
  const taken = new Set<number>();
  const pick = async (offset: number): Promise<number> => {
    if (basePort !== 0) return basePort + offset;
    for (let attempt = 0; attempt < 50; attempt++) {
      const port = await freePort();
      if (!taken.has(port)) {
        taken.add(port);
        return port;
      }
    }
    throw new Error('no distinct free loopback port after 50 tries');
  };
  const nodes: NodeLayout[] = [];
  for (let i = 1; i <= nodeCount; i++) {
    nodes.push({ index: i, id: `node-${i}`, port: await pick(100 + i), internalPort: await pick(200 + i), metricsPort: await pick(300 + i) });
  }
  const cluster: RedisClusterNode[] = [];
  for (let k = 0; redisCluster && k < REDIS_CLUSTER_NODES; k++) cluster.push({ port: await pick(3 + k), busPort: await pick(10_003 + k) });
  const cassandraPort = store === 'cassandra' ? (basePort === 0 ? 0 : basePort + 20) : null;
  const layout = { dir, lbPort: await pick(0), statsPort: await pick(1), idpPort: await pick(2), redisPort: cluster[0]?.port ?? (await pick(3)), redisCluster: cluster, cassandraPort, nodes };
  const all = allPorts(layout);
  if (new Set(all).size !== all.length) throw new Error(`port collision in the layout: ${all.join(', ')}`);
  return layout;
}

export function allPorts(layout: ClusterLayout): number[] {
  const redis = layout.redisCluster.length > 0 ? layout.redisCluster.flatMap((r) => [r.port, r.busPort]) : [layout.redisPort];
  const cassandra = layout.cassandraPort ? [layout.cassandraPort] : [];
  return [layout.lbPort, layout.statsPort, layout.idpPort, ...redis, ...cassandra, ...layout.nodes.flatMap((n) => [n.port, n.internalPort, n.metricsPort])];
}

/** The ports of the layout something already listens on (refuse to start rather than half-start). */
export async function busyPorts(layout: ClusterLayout): Promise<number[]> {
  const busy: number[] = [];
  for (const p of allPorts(layout)) if (!(await isPortFree(p))) busy.push(p);
  return busy;
}

export function nodeOf(layout: ClusterLayout, index: number): NodeLayout {
  const node = layout.nodes.find((n) => n.index === index);
  if (!node) throw new Error(`no node ${index}: this cluster has nodes 1 to ${layout.nodes.length}`);
  return node;
}
