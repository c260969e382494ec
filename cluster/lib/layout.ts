/**
 * Where every process of a loopback cluster listens. With a base port P (the load balancer's):
 *
 *   P        load balancer (HAProxy)          P+100+i  node i's public port
 *   P+1      HAProxy stats page               P+200+i  node i's internal (node-to-node) port
 *   P+2      IdP                              P+300+i  node i's metrics port
 *   P+3      Redis
 *
 * Fixed offsets rather than random ports so the URLs in the docs and in a demo stay the same
 * from one run to the next. Base port 0 picks every port at random instead (tests, CI).
 */
import { freePort, isPortFree } from './ports.ts';

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
  nodes: NodeLayout[];
}

export async function planLayout(dir: string, basePort: number, nodeCount: number): Promise<ClusterLayout> {
  if (!Number.isInteger(nodeCount) || nodeCount < 1 || nodeCount > MAX_NODES) throw new Error(`--nodes must be from 1 to ${MAX_NODES} (got ${nodeCount})`);
  if (basePort !== 0 && (basePort < 1 || basePort + 300 + nodeCount > 65535)) throw new Error(`--port must be 0 or leave room for port+${300 + nodeCount} (got ${basePort})`);
  const pick = (offset: number): Promise<number> => (basePort === 0 ? freePort() : Promise.resolve(basePort + offset));
  const nodes: NodeLayout[] = [];
  for (let i = 1; i <= nodeCount; i++) {
    nodes.push({ index: i, id: `node-${i}`, port: await pick(100 + i), internalPort: await pick(200 + i), metricsPort: await pick(300 + i) });
  }
  const layout = { dir, lbPort: await pick(0), statsPort: await pick(1), idpPort: await pick(2), redisPort: await pick(3), nodes };
  const all = allPorts(layout);
  if (new Set(all).size !== all.length) throw new Error(`port collision in the layout: ${all.join(', ')}`);
  return layout;
}

export function allPorts(layout: ClusterLayout): number[] {
  return [layout.lbPort, layout.statsPort, layout.idpPort, layout.redisPort, ...layout.nodes.flatMap((n) => [n.port, n.internalPort, n.metricsPort])];
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
