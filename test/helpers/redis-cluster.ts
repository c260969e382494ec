/**
 * A real Redis Cluster for tests: 3 masters (and optionally a replica each) as child processes on
 * free loopback ports, joined with `redis-cli --cluster create`, keeping nothing on disk, stopped
 * when the test is done (cluster/lib/redis-cluster.ts has the settings).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';
import { clusterSeeds, createRedisCluster, redisCli, redisClusterNodeArgs, waitRedisCluster, type RedisClusterNode } from '../../cluster/lib/redis-cluster.ts';
import { redisPing } from '../../cluster/lib/probes.ts';
import { freePort } from '../../cluster/lib/ports.ts';
import { keySlot } from '../../src/redis/slots.ts';
import { reapOnExit } from './reaper.ts';

export interface TestRedisClusterNode extends RedisClusterNode {
  child: ChildProcess;
}

export interface TestRedisCluster {
  nodes: TestRedisClusterNode[];
  /** `127.0.0.1:<port>` of every node: CHAT_REDIS_CLUSTER_NODES. */
  seeds: string[];
  /** The port of the master serving `key` now (CLUSTER SLOTS asked of a live node). */
  masterOf(key: string): Promise<number>;
  /** The ports of the current masters. */
  masters(): Promise<number[]>;
  /** The port of a live replica of the master on `port`, or null. */
  replicaOf(port: number): Promise<number | null>;
  /** CLUSTER FAILOVER on the replica on `port` (graceful); resolves once it is a master. */
  promote(port: number, timeoutMs?: number): Promise<void>;
  /** SIGKILL the node on `port` (a crash: no failover handshake). */
  kill(port: number): Promise<void>;
  /**
   * Waits until the master on `victim` is marked failed, a replica serves its slots and a live
   * node reports the cluster ok with every slot served.
   */
  waitFailover(victim: number, timeoutMs?: number): Promise<void>;
  /** Sum of `used_cpu_sys + used_cpu_user` (seconds) of the live nodes, from INFO cpu. */
  cpuSeconds(ports?: number[]): Promise<number>;
  stop(): Promise<void>;
}

export interface TestRedisClusterOptions {
  /** Replicas per master (0 or 1); default 0. */
  replicas?: number;
  nodeTimeoutMs?: number;
}

function live(nodes: TestRedisClusterNode[]): TestRedisClusterNode[] {
  return nodes.filter((n) => n.child.exitCode === null && n.child.signalCode === null);
}

export async function startTestRedisCluster(o: TestRedisClusterOptions = {}): Promise<TestRedisCluster> {
  const replicas = o.replicas ?? 0;
  const count = 3 * (replicas + 1);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-redis-cluster-'));
  const nodes: TestRedisClusterNode[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(
      nodes.map(
        (n) =>
          new Promise<void>((resolve) => {
            if (n.child.exitCode !== null || n.child.signalCode !== null) return resolve();
            const t = setTimeout(() => n.child.kill('SIGKILL'), 3000);
            n.child.once('exit', () => {
              clearTimeout(t);
              resolve();
            });
            n.child.kill('SIGTERM');
          }),
      ),
    );
    fs.rmSync(dir, { recursive: true, force: true });
  };
  // Ports distinct within this cluster: the kernel can hand one free port out twice in a row,
  // and two nodes given one port (or a node whose port and bus port are the same) stop at once.
  const used = new Set<number>();
  const distinctPort = async (): Promise<number> => {
    for (;;) {
      const port = await freePort();
      if (!used.has(port)) {
        used.add(port);
        return port;
      }
    }
  };
  /** One node, up and answering; other ports when it stops at once (a port taken meanwhile). */
  const startNode = async (): Promise<TestRedisClusterNode> => {
    for (let attempt = 1; ; attempt += 1) {
      const node = { port: await distinctPort(), busPort: await distinctPort() };
      const child = reapOnExit(spawn('redis-server', [...redisClusterNodeArgs(node, dir, { nodeTimeoutMs: o.nodeTimeoutMs }), '--loglevel', 'warning'], { stdio: ['ignore', 'ignore', 'ignore'] }));
      const deadline = Date.now() + 10_000;
      while (child.exitCode === null && child.signalCode === null && Date.now() < deadline) {
        if ((await redisPing(node.port)) && child.exitCode === null) return { ...node, child };
        await new Promise((r) => setTimeout(r, 50));
      }
      child.kill('SIGKILL');
      if (attempt === 3) throw new Error(`redis-server on ${node.port} did not start (3 attempts on other ports)`);
    }
  };
  try {
    for (let i = 0; i < count; i += 1) nodes.push(await startNode());
    await createRedisCluster(nodes, replicas);
    await waitRedisCluster(nodes);
  } catch (error) {
    await stop();
    throw error;
  }
  const ask = async (args: string[]): Promise<string> => {
    let last: unknown = null;
    for (const n of live(nodes)) {
      try {
        return await redisCli(['-p', String(n.port), ...args], 3000);
      } catch (error) {
        last = error;
      }
    }
    throw last ?? new Error('no live Redis Cluster node');
  };
  /** CLUSTER SHARDS is 7.0+; CLUSTER NODES is simpler to parse: `<id> <ip:port@bus> <flags> <master> ... <slots>`. */
  const table = async (): Promise<Array<{ id: string; port: number; master: boolean; masterId: string; failed: boolean; ranges: Array<[number, number]> }>> =>
    (await ask(['cluster', 'nodes']))
      .trim()
      .split('\n')
      .map((line) => {
        const parts = line.split(' ');
        const flags = parts[2]!.split(',');
        const ranges = parts.slice(8).filter((r) => /^\d/.test(r)).map((r) => {
          const [a, b] = r.split('-').map(Number);
          return [a!, b ?? a!] as [number, number];
        });
        return { id: parts[0]!, port: Number(/:(\d+)@/.exec(parts[1]!)![1]), master: flags.includes('master'), masterId: parts[3]!, failed: flags.includes('fail') || flags.includes('fail?'), ranges };
      });
  return {
    nodes,
    seeds: clusterSeeds(nodes),
    async masterOf(key) {
      const slot = keySlot(key);
      const owner = (await table()).find((n) => n.master && !n.failed && n.ranges.some(([a, b]) => slot >= a && slot <= b));
      if (!owner) throw new Error(`no live master serves slot ${slot}`);
      return owner.port;
    },
    async masters() {
      return (await table()).filter((n) => n.master && !n.failed && n.ranges.length > 0).map((n) => n.port);
    },
    async replicaOf(port) {
      const nodes = await table();
      const master = nodes.find((n) => n.port === port);
      return nodes.find((n) => !n.master && !n.failed && n.masterId === master?.id)?.port ?? null;
    },
    async promote(port, timeoutMs = 20_000) {
      await redisCli(['-p', String(port), 'cluster', 'failover'], 3000);
      const deadline = Date.now() + timeoutMs;
      while (!(await table()).some((n) => n.port === port && n.master && n.ranges.length > 0)) {
        if (Date.now() > deadline) throw new Error(`${port} was not promoted within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async kill(port) {
      const n = nodes.find((x) => x.port === port);
      if (!n || n.child.exitCode !== null || n.child.signalCode !== null) return;
      await new Promise<void>((resolve) => {
        n.child.once('exit', () => resolve());
        n.child.kill('SIGKILL');
      });
    },
    async waitFailover(victim, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const info = await ask(['cluster', 'info']).catch(() => '');
        const nodes = await table().catch(() => []);
        const replaced = nodes.some((n) => n.port === victim && n.failed) && nodes.filter((n) => n.master && !n.failed && n.ranges.length > 0).length === 3;
        if (replaced && /cluster_state:ok/.test(info) && /cluster_slots_ok:16384/.test(info)) return;
        if (Date.now() > deadline) throw new Error(`the Redis Cluster did not recover within ${timeoutMs} ms:\n${info}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async cpuSeconds(ports) {
      const chosen = live(nodes).filter((n) => !ports || ports.includes(n.port));
      const values = await Promise.all(
        chosen.map(async (n) => {
          const info = await redisCli(['-p', String(n.port), 'info', 'cpu'], 3000);
          return Number(/used_cpu_sys:([\d.]+)/.exec(info)?.[1] ?? 0) + Number(/used_cpu_user:([\d.]+)/.exec(info)?.[1] ?? 0);
        }),
      );
      return values.reduce((a, b) => a + b, 0);
    },
    stop,
  };
}

/** One Redis Cluster for the test file: started before its tests, stopped after them. */
export function useTestRedisCluster(o: TestRedisClusterOptions = {}): () => TestRedisCluster {
  let cluster: TestRedisCluster | null = null;
  before(async () => {
    cluster = await startTestRedisCluster(o);
  });
  after(async () => {
    await cluster?.stop();
  });
  return () => {
    if (!cluster) throw new Error('the test Redis Cluster is not started yet (use it inside a test)');
    return cluster;
  };
}
