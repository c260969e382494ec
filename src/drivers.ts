/**
 * The drivers a node runs, chosen by configuration (README's table, docs/deploy.md): a cluster
 * of one runs everything in process; `CHAT_CLUSTER=redis` puts the bus, presence and rate limits
 * on Redis: one server (CHAT_REDIS_URL) or a Redis Cluster (CHAT_REDIS_CLUSTER_NODES), the same
 * drivers on both. The store is SQLite (one file; shared between the nodes of one machine in a test
 * cluster) or Cassandra.
 *
 * The bus's work queue carries only push jobs, so its retry policy is the push one: backoff that
 * waits at least as long as a push service's Retry-After asked.
 *
 * Each Redis driver gets a connection of its own: a blocking read of the bus must not delay a
 * rate-limit decision queued behind it on the same socket.
 */
import type { Config } from './config/index.ts';
import type { ChatBus } from './actors/index.ts';
import { createBus } from './bus/index.ts';
import { pushRetryPolicy } from './push/index.ts';
import { createPresence, type Presence } from './presence/index.ts';
import { createRateLimiter, type RateLimiter } from './ratelimit/index.ts';
import { redisFactory, type RedisFactory } from './redis/client.ts';
import type { RedisHealth } from './redis/health.ts';
import { createStore, sqliteStorePath, type ChatStore } from './store/index.ts';

export interface Drivers {
  /** Connections to the cluster's Redis; null for a cluster of one. */
  redis: RedisFactory | null;
  store: ChatStore;
  bus: ChatBus;
  presence: Presence;
  rateLimiter: RateLimiter;
}

export interface DriverHooks {
  onBusListenerError: (error: unknown, channel: string) => void;
  onPushGiveUp: (job: unknown, error: unknown) => void;
  /** Tracks every Redis connection the node opens (metrics). */
  redisHealth?: RedisHealth;
}

export async function openDrivers(cfg: Config, hooks: DriverHooks): Promise<Drivers> {
  const cluster = cfg.cluster;
  const connect = cluster.mode === 'redis' ? redisFactory({ url: cluster.redisUrl, clusterNodes: cluster.redisClusterNodes, keyPrefix: cluster.keyPrefix }) : null;
  const redis = connect && hooks.redisHealth ? hooks.redisHealth.wrap(connect) : connect;
  const keyPrefix = cluster.mode === 'redis' ? cluster.keyPrefix : '';
  const need = (what: string): RedisFactory => {
    if (redis === null) throw new Error(`${what} on Redis needs CHAT_CLUSTER=redis`);
    return redis;
  };

  const store =
    cfg.store.driver === 'sqlite'
      ? await createStore({ driver: 'sqlite', mode: cfg.store.mode, writer: cfg.store.writer, path: sqliteStorePath(cfg.dataDir), groupCommit: { minIntervalMs: cfg.store.commitIntervalMs } })
      : await createStore({ ...cfg.store });
  const rateLimiter = cfg.rateLimit.driver === 'redis' ? createRateLimiter({ driver: 'redis', redis: need('rate limiting')('chat-ratelimit'), keyPrefix, lease: cfg.rateLimit.lease }) : createRateLimiter({ driver: 'memory' });
  const presence =
    cfg.presence.driver === 'redis'
      ? createPresence({ driver: 'redis', redis: need('presence')('chat-presence'), keyPrefix, windowMs: cfg.presence.windowMs })
      : createPresence({ driver: 'memory', windowMs: cfg.presence.windowMs });
  const bus: ChatBus =
    cluster.mode === 'redis'
      ? createBus({
          driver: 'redis',
          redis: need('the bus'),
          keyPrefix,
          nodeId: cluster.nodeId,
          window: cfg.busWindow,
          ...(cluster.redisJobShards === null ? {} : { jobShards: cluster.redisJobShards }),
          // GROUP and DIRECT events reach their members' own channels: one fan log entry each.
          ...(cluster.redisFanShards === 0 ? {} : { fan: { shards: cluster.redisFanShards, fanned: (channel: string) => channel.startsWith('user:') } }),
          ...(cluster.redisPubSub === null ? {} : { shardedPubSub: cluster.redisPubSub === 'sharded' }),
          onListenerError: hooks.onBusListenerError,
          onGiveUp: hooks.onPushGiveUp,
          retry: pushRetryPolicy,
        })
      : createBus({ driver: 'local', window: cfg.busWindow, onListenerError: hooks.onBusListenerError, onGiveUp: hooks.onPushGiveUp, retry: pushRetryPolicy });
  return { redis, store, bus, presence, rateLimiter };
}
