/** The cluster settings (CHAT_CLUSTER and what it needs): README's table, docs/sharding.md. */
import os from 'node:os';
import { parseClusterNode } from '../redis/client.ts';
import type { Env, EnvReader } from './env-reader.ts';

/**
 * The cluster (docs/sharding.md, docs/deploy.md). `none`: a cluster of one, everything in
 * process. `redis`: membership, placement, the bus, presence and rate limits on Redis (one
 * server, CHAT_REDIS_URL, or a Redis Cluster, CHAT_REDIS_CLUSTER_NODES), and requests for
 * conversations owned elsewhere forwarded over the internal port.
 */
export type ClusterConfig =
  | { mode: 'none' }
  | {
      mode: 'redis';
      /** One Redis server; '' when redisClusterNodes is set. */
      redisUrl: string;
      /** Seed nodes of a Redis Cluster (`host:port` or `redis[s]://...`); empty: redisUrl. */
      redisClusterNodes: string[];
      /** Job streams of the bus's work queue; null: the driver's default (1, or 8 on a cluster). */
      redisJobShards: number | null;
      /** CHAT_REDIS_FAN_SHARDS (default 1): users' own channels on the fan log over this many shards; 0: a stream per channel. */
      redisFanShards: number;
      /** Live delivery over sharded (Redis 7) or classic pub/sub; null: sharded on a cluster only. */
      redisPubSub: 'sharded' | 'classic' | null;
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
    const redisClusterNodes = str('CHAT_REDIS_CLUSTER_NODES', '').split(',').map((n) => n.trim()).filter((n) => n !== '');
    if (redisClusterNodes.length > 0 && redisUrl !== '') problems.push('set CHAT_REDIS_URL (one Redis) or CHAT_REDIS_CLUSTER_NODES (a Redis Cluster), not both');
    else if (redisClusterNodes.length === 0 && !/^rediss?:\/\//.test(redisUrl)) problems.push(`CHAT_REDIS_URL must be a redis:// or rediss:// URL when CHAT_CLUSTER=redis (got "${redisUrl}"), or CHAT_REDIS_CLUSTER_NODES a list of host:port`);
    for (const node of redisClusterNodes) {
      try {
        parseClusterNode(node);
      } catch {
        problems.push(`CHAT_REDIS_CLUSTER_NODES must be a comma-separated list of host:port or redis[s]://[user:password@]host:port (got "${node}")`);
      }
    }
    const keyPrefix = str('CHAT_REDIS_KEY_PREFIX', 'chat:');
    if (/[{}]/.test(keyPrefix)) problems.push(`CHAT_REDIS_KEY_PREFIX must not contain { or }: a hash tag in the prefix would put every key in one Redis Cluster slot (got "${keyPrefix}")`);
    const pubsub = str('CHAT_REDIS_PUBSUB', '');
    if (pubsub !== '' && pubsub !== 'sharded' && pubsub !== 'classic') problems.push(`CHAT_REDIS_PUBSUB must be "sharded" or "classic" (got "${pubsub}")`);
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
      redisUrl: redisClusterNodes.length > 0 ? '' : redisUrl,
      redisClusterNodes,
      redisJobShards: env.CHAT_REDIS_JOB_SHARDS ? int('CHAT_REDIS_JOB_SHARDS', 1, 1, 256) : null,
      // At most the bus's MAX_FAN_SHARDS (8): the realtime ids' length bound.
      redisFanShards: int('CHAT_REDIS_FAN_SHARDS', 1, 0, 8),
      redisPubSub: pubsub === 'sharded' || pubsub === 'classic' ? pubsub : null,
      keyPrefix,
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
