/**
 * A real cluster on loopback for tests: a redis-server of its own, the IdP as its own process,
 * and N chat node processes with CHAT_CLUSTER=redis sharing one SQLite file (shared-file mode)
 * and the cluster's secrets. Every node listens on a fixed free port (public and internal), so
 * a killed node restarts on the same addresses.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, startTestIdp, startTestNode, type TestIdp, type TestNode } from './processes.ts';
import { startTestRedis, type TestRedis } from './redis.ts';

export interface TestCluster {
  redis: TestRedis;
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
}

export async function startCluster(options: ClusterOptions = {}): Promise<TestCluster> {
  const n = options.nodes ?? 3;
  const redis = await startTestRedis();
  const idp = await startTestIdp({ IDP_PORT: String(await freePort()) });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-cluster-'));
  const secret = (): string => crypto.randomBytes(32).toString('hex');
  const shared: Record<string, string> = {
    CHAT_CLUSTER: 'redis',
    CHAT_REDIS_URL: redis.url,
    CHAT_REDIS_KEY_PREFIX: `test-${crypto.randomUUID().slice(0, 8)}:`,
    CHAT_CLUSTER_SECRET: secret(),
    CHAT_CURSOR_SECRET: secret(),
    CHAT_REALTIME_SECRET: secret(),
    CHAT_SQLITE_MODE: 'shared-file',
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
      const node = await startTestNode({ ...shared, CHAT_NODE_ID: `node-${i + 1}`, CHAT_PORT: String(p.port), CHAT_INTERNAL_PORT: String(p.internal) });
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
      await redis.stop();
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
