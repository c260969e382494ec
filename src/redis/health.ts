/**
 * Redis health, seen from the node: every connection the node opened (by its name: bus,
 * membership, presence, ...) with its state, and the errors and reconnects each name went
 * through. Read at scrape time for `chat_redis_*` (src/metrics/driver-metrics.ts).
 */
import type { RedisClient, RedisFactory } from './client.ts';

/** ioredis's connection states: `ready` is the one that serves commands (a Cluster client's own status too). */
export const REDIS_STATES = ['wait', 'connecting', 'connect', 'ready', 'reconnecting', 'close', 'end'] as const;

export class RedisHealth {
  private readonly open = new Map<RedisClient, string>();
  readonly errors = new Map<string, number>();
  readonly reconnects = new Map<string, number>();

  /** A factory whose connections are tracked here. */
  wrap(factory: RedisFactory): RedisFactory {
    return (name) => this.track(name, factory(name));
  }

  track(name: string, connection: RedisClient): RedisClient {
    this.open.set(connection, name);
    this.errors.set(name, this.errors.get(name) ?? 0);
    this.reconnects.set(name, this.reconnects.get(name) ?? 0);
    connection.on('error', () => this.errors.set(name, (this.errors.get(name) ?? 0) + 1));
    connection.on('reconnecting', () => this.reconnects.set(name, (this.reconnects.get(name) ?? 0) + 1));
    // `end`: closed for good (quit, disconnect, retries given up): no longer the node's.
    connection.once('end', () => this.open.delete(connection));
    return connection;
  }

  /** Open connections per (name, state). */
  connections(): Map<string, Map<string, number>> {
    const out = new Map<string, Map<string, number>>();
    for (const [connection, name] of this.open) {
      let states = out.get(name);
      if (states === undefined) out.set(name, (states = new Map(REDIS_STATES.map((s) => [s, 0]))));
      states.set(connection.status, (states.get(connection.status) ?? 0) + 1);
    }
    return out;
  }
}
