/** The cluster settings (CHAT_CLUSTER and what it needs): README's table, docs/sharding.md. */
import os from 'node:os';
import type { Env, EnvReader } from './env-reader.ts';

/**
 * The cluster (docs/sharding.md, docs/deploy.md). `none`: a cluster of one, everything in
 * process. `redis`: membership, placement, the bus, presence and rate limits on Redis, and
 * requests for conversations owned elsewhere forwarded over the internal port.
 */
export type ClusterConfig =
  | { mode: 'none' }
  | {
      mode: 'redis';
      redisUrl: string;
      keyPrefix: string;
      nodeId: string;
      internalHost: string;
      /** 0: any free port (the advertised URL is then fixed up after listen). */
      internalPort: number;
      /** How peers reach this node's internal port; null: derived from host and port. */
      internalUrl: string | null;
      secret: string;
      heartbeatMs: number;
      nodeTtlMs: number;
      forwardTimeoutMs: number;
    };

export function clusterSettings(env: Env, r: EnvReader, problems: string[]): ClusterConfig {
  const { str, int, url } = r;
  const clusterMode = str('CHAT_CLUSTER', 'none');
  if (clusterMode !== 'none' && clusterMode !== 'redis') problems.push(`CHAT_CLUSTER must be "none" or "redis" (got "${clusterMode}")`);
  if (clusterMode === 'redis') {
    const redisUrl = str('CHAT_REDIS_URL', '');
    if (!/^rediss?:\/\//.test(redisUrl)) problems.push(`CHAT_REDIS_URL must be a redis:// or rediss:// URL when CHAT_CLUSTER=redis (got "${redisUrl}")`);
    const secret = str('CHAT_CLUSTER_SECRET', '');
    if (secret.length < 16) problems.push('CHAT_CLUSTER_SECRET must be set (at least 16 characters, the same on every node) when CHAT_CLUSTER=redis');
    for (const name of ['CHAT_CURSOR_SECRET', 'CHAT_REALTIME_SECRET']) {
      if (!env[name]) problems.push(`${name} must be set (the same on every node) when CHAT_CLUSTER=redis: a secret generated per node would not verify on the others`);
    }
    const nodeId = str('CHAT_NODE_ID', `${os.hostname()}-${process.pid}`);
    if (!/^[A-Za-z0-9_.:-]{1,100}$/.test(nodeId)) problems.push(`CHAT_NODE_ID must be 1-100 characters of letters, digits, _ . : - (got "${nodeId}")`);
    const heartbeatMs = int('CHAT_HEARTBEAT_MS', 1000, 50, 60_000);
    const nodeTtlMs = int('CHAT_NODE_TTL_MS', 5000, 200, 600_000);
    if (nodeTtlMs < 2 * heartbeatMs) problems.push(`CHAT_NODE_TTL_MS must be at least twice CHAT_HEARTBEAT_MS (got ${nodeTtlMs} and ${heartbeatMs})`);
    const internalUrl = env.CHAT_INTERNAL_URL ? url('CHAT_INTERNAL_URL', env.CHAT_INTERNAL_URL) : null;
    return {
      mode: 'redis',
      redisUrl,
      keyPrefix: str('CHAT_REDIS_KEY_PREFIX', 'chat:'),
      nodeId,
      internalHost: str('CHAT_INTERNAL_HOST', str('CHAT_HOST', '127.0.0.1')),
      internalPort: int('CHAT_INTERNAL_PORT', 0, 0, 65535),
      internalUrl,
      secret,
      heartbeatMs,
      nodeTtlMs,
      forwardTimeoutMs: int('CHAT_FORWARD_TIMEOUT_MS', 5000, 100, 120_000),
    };
  }
  return { mode: 'none' };
}
