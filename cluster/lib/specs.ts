/**
 * How to start, and how to tell ready, each kind of process of a loopback cluster.
 */
import path from 'node:path';
import { IDP_SCRIPT, NODE_SCRIPT, nodeArgs } from './build.ts';
import { idpEnv, idpSettings, idpUrl, lbUrl, nodeEnv, withBase } from './env.ts';
import { nodeOf, type ClusterLayout } from './layout.ts';
import { httpOk, redisPing } from './probes.ts';
import { redisClusterNodeArgs } from './redis-cluster.ts';
import type { ClusterSecrets } from './secrets.ts';
import type { ClusterState } from './state.ts';
import type { SpawnSpec } from './procs.ts';

export interface ProcSpec extends SpawnSpec {
  marker: string;
  ready: () => Promise<boolean>;
  /** How long to wait for a graceful stop before SIGKILL. */
  stopGraceMs: number;
}

export const logFile = (layout: ClusterLayout, name: string): string => path.join(layout.dir, 'logs', `${name}.log`);
export const haproxyCfgFile = (layout: ClusterLayout): string => path.join(layout.dir, 'haproxy.cfg');

export function redisSpec(layout: ClusterLayout): ProcSpec {
  return {
    name: 'redis',
    command: 'redis-server',
    // Nothing on disk: the cluster's Redis holds membership, the bus window and rate limits,
    // all of which a fresh cluster rebuilds. `--dir` keeps any stray file inside the cluster dir.
    args: ['--port', String(layout.redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', path.join(layout.dir, 'redis'), '--loglevel', 'notice'],
    cwd: layout.dir,
    env: withBase({}),
    logFile: logFile(layout, 'redis'),
    // redis-server rewrites its process title to `redis-server 127.0.0.1:<port>`.
    marker: `:${layout.redisPort}`,
    ready: () => redisPing(layout.redisPort),
    stopGraceMs: 5000,
  };
}

/** Node k (from 0) of the Redis Cluster: `redis-<k+1>`; joined into a cluster by start.ts. */
export function redisClusterSpec(layout: ClusterLayout, k: number): ProcSpec {
  const node = layout.redisCluster[k]!;
  return {
    name: `redis-${k + 1}`,
    command: 'redis-server',
    args: [...redisClusterNodeArgs(node, path.join(layout.dir, 'redis')), '--loglevel', 'notice'],
    cwd: layout.dir,
    env: withBase({}),
    logFile: logFile(layout, `redis-${k + 1}`),
    // redis-server rewrites its process title to `redis-server 127.0.0.1:<port> [cluster]`.
    marker: `:${node.port}`,
    ready: () => redisPing(node.port),
    stopGraceMs: 5000,
  };
}

export function idpSpec(state: ClusterState): ProcSpec {
  const script = path.join(state.root, IDP_SCRIPT[state.runtime]);
  return {
    name: 'idp',
    command: process.execPath,
    args: nodeArgs(state.runtime, script),
    cwd: state.root,
    env: withBase(idpEnv(state.layout, idpSettings(state.fixturePath))),
    logFile: logFile(state.layout, 'idp'),
    marker: script,
    ready: () => httpOk(`${idpUrl(state.layout)}/.well-known/openid-configuration`),
    stopGraceMs: 5000,
  };
}

export function nodeSpec(state: ClusterState, secrets: ClusterSecrets, index: number): ProcSpec {
  const node = nodeOf(state.layout, index);
  const script = path.join(state.root, NODE_SCRIPT[state.runtime]);
  return {
    name: node.id,
    command: process.execPath,
    // BENCH_NODE_ARGS: extra node flags for every chat node, as bench/lib/processes.ts gives a lone
    // benched node (profiling a cluster: `--cpu-prof --cpu-prof-dir=DIR`, `--perf-basic-prof`).
    args: [...(process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(/\s+/).filter(Boolean) : []), ...nodeArgs(state.runtime, script)],
    cwd: state.root,
    env: withBase(nodeEnv(state.layout, node, secrets, idpSettings(state.fixturePath), state.store)),
    logFile: logFile(state.layout, node.id),
    marker: script,
    ready: () => httpOk(`http://127.0.0.1:${node.port}/readyz`),
    // The node's own grace (CHAT_SHUTDOWN_GRACE_MS, 10 s by default) plus time to leave the ring.
    stopGraceMs: 20_000,
  };
}

export function haproxySpec(layout: ClusterLayout): ProcSpec {
  const cfg = haproxyCfgFile(layout);
  return {
    name: 'haproxy',
    command: 'haproxy',
    // -db: stay in the foreground as one process, so its pid is the one to signal.
    args: ['-db', '-f', cfg],
    cwd: layout.dir,
    env: withBase({}),
    logFile: logFile(layout, 'haproxy'),
    marker: cfg,
    // Ready once a request through it reaches a ready node.
    ready: () => httpOk(`${lbUrl(layout)}/readyz`),
    stopGraceMs: 5000,
  };
}
