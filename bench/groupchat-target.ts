/**
 * What the `groupchat` bench runs against: one node (the esbuild bundle with the embedded IdP,
 * pinned to the target CPU, its data on disk: the archive as durable as a deployment's), or a
 * loopback cluster of N nodes behind HAProxy with Redis (bench/lib/cluster-up.ts), and how to read
 * the CPU time every process of it used: /proc for the nodes and HAProxy, and Redis's own
 * counters (INFO cpu) for Redis.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { cpuSeconds } from './fanout-proc.ts';
import { buildNode, nodeEnv } from './lib/chat-node.ts';
import { startBenchCluster } from './lib/cluster-up.ts';
import { BenchError } from './lib/errors.ts';
import { freePort, onExit, startTsx } from './lib/processes.ts';

/** CPU seconds (user + system) so far of the target's processes. */
export interface CpuSample {
  nodes: number;
  /** The kernel's part of `nodes` (system time: sockets, the disk). */
  nodesSystem: number;
  haproxy: number;
  /** Redis's own counters (used_cpu_sys + used_cpu_user); 0 without Redis. */
  redis: number;
  /** Commands Redis ran so far, and of them scripts (EVALSHA, EVAL; INFO commandstats); 0 without Redis. */
  redisCommands: number;
  redisScripts: number;
  /** Calls so far per command name (scripts' inner commands included). */
  redisByCommand: Record<string, number>;
}

export interface Target {
  kind: 'node' | 'cluster';
  nodes: number;
  /** Where clients go: the node, or the balancer. */
  origin: string;
  host: string;
  port: number;
  idp: string;
  sample(): Promise<CpuSample>;
  stop(): Promise<void>;
}

/** Settings every benched node gets on top of the bench's own (cluster-up.ts, chat-node.ts). */
export const GROUPCHAT_NODE_ENV: Record<string, string> = {
  // Members heartbeat once, at setup: online for the whole run.
  CHAT_PRESENCE_WINDOW_MS: '1800000',
  CHAT_REALTIME_TOKEN_TTL_MS: '3600000',
  CHAT_RETENTION_INTERVAL_MS: '0',
  // A/B of the realtime write gathering (docs/realtime.md): the bench's own setting, if given.
  ...(process.env.CHAT_REALTIME_FLUSH_MS === undefined ? {} : { CHAT_REALTIME_FLUSH_MS: process.env.CHAT_REALTIME_FLUSH_MS }),
};

const procTimes = (pid: number): { user: number; system: number } => {
  const c = cpuSeconds(pid);
  if (c.user < 0) throw new BenchError(`cannot read /proc/${pid}/stat (the process is gone, or this is not Linux)`);
  return c;
};
const procCpu = (pid: number): number => {
  const c = procTimes(pid);
  return c.user + c.system;
};

async function redisCpu(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const field = (name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? NaN);
  const total = field('used_cpu_sys') + field('used_cpu_user');
  if (!Number.isFinite(total)) throw new BenchError(`INFO cpu of Redis has no used_cpu_sys/used_cpu_user:\n${info}`);
  return total;
}

/** Commands run so far (every cmdstat_* line's calls), and scripts among them. */
async function redisCalls(redis: Redis): Promise<{ redisCommands: number; redisScripts: number; redisByCommand: Record<string, number> }> {
  const info = await redis.info('commandstats');
  let redisCommands = 0;
  let redisScripts = 0;
  const redisByCommand: Record<string, number> = {};
  for (const m of info.matchAll(/^cmdstat_([a-z|_-]+):calls=(\d+)/gm)) {
    redisCommands += Number(m[2]);
    redisByCommand[m[1]!] = Number(m[2]);
    if (m[1] === 'evalsha' || m[1] === 'eval') redisScripts += Number(m[2]);
  }
  return { redisCommands, redisScripts, redisByCommand };
}

export async function startNode(fixture: string, dataBase: string, log: (line: string) => void): Promise<Target> {
  const dataDir = mkdtempSync(path.join(dataBase, 'bench-groupchat-'));
  const removeDataDir = onExit(() => rmSync(dataDir, { recursive: true, force: true }));
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  // BENCH_NODE_MAIN: another build of the node to bench (an A/B comparison against a bundle built
  // from another commit with `npm run build -- --outdir=.tmp/base`, kept inside the repository so
  // that it finds node_modules).
  const main = process.env.BENCH_NODE_MAIN;
  if (main === undefined) buildNode(log);
  log(`starting the chat node${main ? ` (${main})` : ''} on ${origin} (data in ${dataDir})`);
  const env = Object.assign(nodeEnv(port, dataDir), GROUPCHAT_NODE_ENV, { CHAT_IDP_FIXTURE: fixture });
  const node = await startTsx({ name: 'chat-node', file: main ?? 'dist/main.mjs', env, readyUrl: `${origin}/readyz`, timeoutMs: 60_000 }).catch((err: unknown) => {
    removeDataDir();
    throw err;
  });
  const pid = node.child.pid!;
  return {
    kind: 'node',
    nodes: 1,
    origin,
    host: '127.0.0.1',
    port,
    idp: `${origin}/idp`,
    sample: () => Promise.resolve({ nodes: procCpu(pid), nodesSystem: procTimes(pid).system, haproxy: 0, redis: 0, redisCommands: 0, redisScripts: 0, redisByCommand: {} }),
    stop: async () => {
      await node.stop();
      removeDataDir();
    },
  };
}

export async function startCluster(size: number, fixture: string, log: (line: string) => void): Promise<Target> {
  buildNode(log);
  const cluster = await startBenchCluster(size, log, GROUPCHAT_NODE_ENV, { fixturePath: fixture });
  const redis = new Redis({ host: '127.0.0.1', port: cluster.redisPorts[0], lazyConnect: true, maxRetriesPerRequest: 2 });
  redis.on('error', () => undefined);
  await redis.connect();
  return {
    kind: 'cluster',
    nodes: size,
    origin: cluster.lb,
    host: '127.0.0.1',
    port: cluster.lbPort,
    idp: cluster.idp,
    sample: async () => ({
      nodes: cluster.nodes.reduce((sum, n) => sum + procCpu(n.pid), 0),
      nodesSystem: cluster.nodes.reduce((sum, n) => sum + procTimes(n.pid).system, 0),
      haproxy: procCpu(cluster.haproxyPid),
      redis: await redisCpu(redis),
      ...(await redisCalls(redis)),
    }),
    stop: async () => {
      redis.disconnect();
      await cluster.stop();
    },
  };
}

/** Where a single node's data goes: on disk (the OS temp dir), unless `tmpfs`. */
export const dataBase = (tmpfs: boolean): string => (tmpfs ? '/dev/shm' : os.tmpdir());
