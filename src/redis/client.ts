/**
 * Redis connections for the cluster drivers (membership, bus, presence, rate limits).
 *
 * Every driver takes a connection factory rather than a URL, so a node opens the connections it
 * needs with one set of options and the tests point everything at their own redis-server.
 * Blocking commands (XREADGROUP BLOCK, XREAD BLOCK) need a connection of their own: a blocked
 * connection delays every command queued behind it.
 */
import { Redis, type RedisOptions } from 'ioredis';

export interface RedisSettings {
  /** `redis://[user:password@]host:port[/db]` */
  url: string;
  /** Prefix for every key this cluster writes, so several clusters can share one Redis. */
  keyPrefix: string;
}

/** Opens one connection; `name` shows in CLIENT LIST and in logs. */
export type RedisFactory = (name: string) => Redis;

export function redisFactory(settings: RedisSettings, extra: RedisOptions = {}): RedisFactory {
  return (name) =>
    new Redis(settings.url, {
      connectionName: name,
      // Commands issued while disconnected wait for the reconnect, but not forever: a driver
      // call fails after the retries rather than hanging a request.
      maxRetriesPerRequest: 2,
      enableAutoPipelining: true,
      retryStrategy: (times) => Math.min(1000, 50 * 2 ** Math.min(times, 5)),
      ...extra,
    });
}
