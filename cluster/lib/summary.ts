/** What `up` prints once the cluster is ready, and what `status` prints. */
import path from 'node:path';
import { dataDir, idpUrl, lbUrl, redisUrl } from './env.ts';
import { runs } from './procs.ts';
import type { ClusterState } from './state.ts';

export function summary(state: ClusterState, cwd = process.cwd()): string {
  const l = state.layout;
  const rel = (p: string): string => path.relative(cwd, p) || '.';
  const rows = [
    `cluster of ${l.nodes.length} node(s) up in ${rel(l.dir)}`,
    `  load balancer  ${lbUrl(l)}/api/v1   (try ${lbUrl(l)}/api/v1/openapi.json)`,
    `  haproxy stats  http://127.0.0.1:${l.statsPort}/`,
    `  IdP            ${idpUrl(l)}   (POST /dev/login for a token)`,
    `  redis          ${redisUrl(l)}`,
    `  sqlite data    ${rel(dataDir(l))}`,
    ...l.nodes.map((n) => `  ${n.id.padEnd(13)}  http://127.0.0.1:${n.port}   internal :${n.internalPort}   metrics http://127.0.0.1:${n.metricsPort}/metrics`),
    `  logs           ${rel(path.join(l.dir, 'logs'))}/<process>.log`,
  ];
  return rows.join('\n');
}

export function status(state: ClusterState): string {
  return Object.entries(state.procs)
    .map(([name, p]) => `${name.padEnd(8)} pid ${String(p.pid).padEnd(8)} ${runs(p.pid, p.marker) ? 'running' : 'DOWN'}   ${p.log}`)
    .join('\n');
}
