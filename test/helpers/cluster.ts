/**
 * A real cluster on loopback for tests: a redis-server of its own (or, with `redisCluster`, a
 * Redis Cluster of 3 masters), the IdP as its own process, and N chat node processes with
 * CHAT_CLUSTER=redis sharing the cluster's secrets and one store: a SQLite file (shared-file
 * mode), or a keyspace of a live Cassandra (`cassandra`, e.g. from test/helpers/cassandra.ts).
 * Every node listens on a fixed free port (public and internal), so a killed node restarts on
 * the same addresses.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, startTestIdp, startTestNode, type TestIdp, type TestNode } from './processes.ts';
import { startTestRedis, type TestRedis } from './redis.ts';
import { startTestRedisCluster, type TestRedisCluster } from './redis-cluster.ts';

export interface TestCluster {
  /** The single redis-server (null with a Redis Cluster). */
  redis: TestRedis | null;
  /** The Redis Cluster (null with a single redis-server). */
  redisCluster: TestRedisCluster | null;
  idp: TestIdp;
  /** The running node of each slot (null while a slot is down). */
  nodes: (TestNode | null)[];
  /** Every node process started, stopped ones included (their log lines, for failure messages). */
  started: TestNode[];
  dataDir: string;
  /** The node of slot i, which must be up. */
  node(i: number): TestNode;
  /** Starts (again) the node of slot i on its ports. */
  start(i: number): Promise<TestNode>;
  /** SIGKILL: no drain, no leave; the ring drops it after the node TTL. */
  kill(i: number): Promise<void>;
  /** SIGTERM: graceful leave and drain. */
  stopNode(i: number): Promise<void>;
  stop(): Promise<void>;
}

export interface ClusterOptions {
  nodes?: number;
  heartbeatMs?: number;
  nodeTtlMs?: number;
  env?: Record<string, string>;
  /** A Redis Cluster of 3 masters (with `replicas` each) instead of one redis-server. */
  redisCluster?: { replicas: number };
  /** The nodes' store: Cassandra at these contact points, in this keyspace (replication factor 1); default shared-file SQLite. */
  cassandra?: { contactPoints: string[]; localDataCenter: string; keyspace: string };
  /** Per node start (default 20 s; a node on a fresh Cassandra keyspace first creates it). */
  readyTimeoutMs?: number;
}

export async function startCluster(options: ClusterOptions = {}): Promise<TestCluster> {
  const n = options.nodes ?? 3;
  const redis = options.redisCluster ? null : await startTestRedis();
  const redisCluster = options.redisCluster ? await startTestRedisCluster({ replicas: options.redisCluster.replicas }) : null;
  const idp = await startTestIdp({ IDP_PORT: String(await freePort()) });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-cluster-'));
  const secret = (): string => crypto.randomBytes(32).toString('hex');
  const shared: Record<string, string> = {
    CHAT_CLUSTER: 'redis',
    ...(redis ? { CHAT_REDIS_URL: redis.url } : { CHAT_REDIS_CLUSTER_NODES: redisCluster!.seeds.join(',') }),
    CHAT_REDIS_KEY_PREFIX: `test-${crypto.randomUUID().slice(0, 8)}:`,
    CHAT_CLUSTER_SECRET: secret(),
    CHAT_CURSOR_SECRET: secret(),
    CHAT_REALTIME_SECRET: secret(),
    ...(options.cassandra
      ? {
          CHAT_STORE_DRIVER: 'cassandra',
          CHAT_CASSANDRA_CONTACT_POINTS: options.cassandra.contactPoints.join(','),
          CHAT_CASSANDRA_LOCAL_DC: options.cassandra.localDataCenter,
          CHAT_CASSANDRA_KEYSPACE: options.cassandra.keyspace,
          CHAT_CASSANDRA_REPLICATION_FACTOR: '1',
        }
      : { CHAT_STORE_DRIVER: 'sqlite', CHAT_SQLITE_MODE: 'shared-file' }),
    CHAT_DATA_DIR: dataDir,
    CHAT_IDP: 'http',
    CHAT_IDP_URL: idp.url,
    CHAT_HEARTBEAT_MS: String(options.heartbeatMs ?? 200),
    CHAT_NODE_TTL_MS: String(options.nodeTtlMs ?? 1500),
    CHAT_WEB_PUSH: 'false',
    CHAT_RETENTION_INTERVAL_MS: '0',
    CHAT_SHUTDOWN_GRACE_MS: '3000',
    ...options.env,
  };
  const ports = await Promise.all(Array.from({ length: n }, async () => ({ port: await freePort(), internal: await freePort() })));
  const nodes: (TestNode | null)[] = Array.from({ length: n }, () => null);
  const cluster: TestCluster = {
    redis,
    redisCluster,
    idp,
    nodes,
    started: [],
    dataDir,
    node(i) {
      const node = nodes[i];
      if (!node) throw new Error(`cluster node ${i} is down`);
      return node;
    },
    async start(i) {
      const p = ports[i]!;
      const node = await startTestNode({ ...shared, CHAT_NODE_ID: `node-${i + 1}`, CHAT_PORT: String(p.port), CHAT_INTERNAL_PORT: String(p.internal) }, options.readyTimeoutMs);
      nodes[i] = node;
      cluster.started.push(node);
      return node;
    },
    async kill(i) {
      await nodes[i]?.stop('SIGKILL');
      nodes[i] = null;
    },
    async stopNode(i) {
      await nodes[i]?.stop('SIGTERM');
      nodes[i] = null;
    },
    async stop() {
      await Promise.all(nodes.map((node, i) => (node ? cluster.stopNode(i) : undefined)));
      await idp.stop();
      await redis?.stop();
      await redisCluster?.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
  try {
    for (let i = 0; i < n; i += 1) await cluster.start(i);
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}
