/** What `up` prints once the cluster is ready, and what `status` prints. */
import path from 'node:path';
import { dataDir, idpPublicUrl, idpUrl, lbUrl, redisClusterNodes, redisUrl } from './env.ts';
import { runs } from './procs.ts';
import type { ClusterState } from './state.ts';

export function summary(state: ClusterState, cwd = process.cwd()): string {
  const l = state.layout;
  const rel = (p: string): string => path.relative(cwd, p) || '.';
  const rows = [
    `cluster of ${l.nodes.length} node(s) up in ${rel(l.dir)}`,
    `  load balancer  ${lbUrl(l)}/api/v1   (try ${lbUrl(l)}/openapi.json)`,
    `  web app        ${lbUrl(l)}/app/   (sign in as a demo user)`,
    `  haproxy stats  http://127.0.0.1:${l.statsPort}/`,
    `  IdP            ${idpPublicUrl(l)}   (through the balancer; POST ${idpPublicUrl(l)}/dev/login for a token; directly: ${idpUrl(l)})`,
    l.redisCluster.length > 0 ? `  redis cluster  ${redisClusterNodes(l)}   (3 masters, then their replicas)` : `  redis          ${redisUrl(l)}`,
    state.store?.driver === 'cassandra'
      ? `  cassandra      ${state.store.contactPoints.join(',')}   keyspace ${state.store.keyspace}, data ${rel(path.join(l.dir, 'cassandra'))}`
      : `  sqlite data    ${rel(dataDir(l))}`,
    ...l.nodes.map((n) => `  ${n.id.padEnd(13)}  http://127.0.0.1:${n.port}   internal :${n.internalPort}   metrics http://127.0.0.1:${n.metricsPort}/metrics`),
    `  logs           ${rel(path.join(l.dir, 'logs'))}/<process>.log`,
  ];
  return rows.join('\n');
}

export function status(state: ClusterState): string {
  return Object.entries(state.procs)
    .map(([name, p]) => `${name.padEnd(11)} pid ${String(p.pid).padEnd(8)} ${runs(p.pid, p.marker) ? 'running' : 'DOWN'}   ${p.log}`)
    .join('\n');
}
