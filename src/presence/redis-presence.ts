/**
 * Shared presence: every node writes heartbeats to and reads statuses from Redis, so a user is
 * online cluster-wide whichever node their app talks to.
 *
 * Per tenant one sorted set `<keyPrefix>presence:<tenant>`: member = user id, score = last
 * heartbeat (epoch ms). A heartbeat is one EVALSHA of lua/heartbeat.lua (ZADD GT, so last_seen_at
 * never moves back, then the trims and the key TTL); statuses for any number of ids are one
 * ZMSCORE. Scores are epoch ms, well below 2^53, so they round-trip exactly as doubles.
 *
 * Memory is bounded like the memory driver's: entries older than REMEMBER_WINDOWS windows are
 * trimmed on each heartbeat (offline users keep showing last_seen_at until then), at most
 * `maxEntriesPerTenant` users are held per tenant (stalest first), and the whole key expires
 * once its newest entry would be forgotten.
 *
 * `now` comes from the caller (injectable), never from Redis TIME; nodes' clocks are assumed
 * NTP-close. Errors: when Redis cannot be reached, calls reject once the connection's retry
 * budget (maxRetriesPerRequest, see redis/client.ts) is spent.
 */
import type { Result } from 'ioredis';
import type { RedisClient } from '../redis/client.ts';
import { defineScript } from '../redis/scripts.ts';
import type { Presence, PresenceEntry, RedisPresenceConfig } from './types.ts';

/** How long past the window a last_seen_at is still remembered: the same as memory-presence.ts. */
const REMEMBER_WINDOWS = 60;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** lua/heartbeat.lua: KEYS[1] = tenant set; user, now, forget-before, remember ms, max entries. */
    chatPresenceHeartbeat(key: string, user: string, now: number, forgetBefore: number, rememberMs: number, maxEntries: number): Result<number, Context>;
  }
}

export class RedisPresence implements Presence {
  readonly driver = 'redis' as const;
  readonly windowMs: number;
  private readonly redis: RedisClient;
  private readonly keyPrefix: string;
  private readonly maxEntries: number;
  private closed = false;

  constructor(config: RedisPresenceConfig) {
    this.windowMs = config.windowMs;
    this.maxEntries = config.maxEntriesPerTenant ?? 1_000_000;
    if (!Number.isSafeInteger(this.windowMs) || this.windowMs < 1) throw new RangeError(`presence: windowMs must be a positive integer (got ${this.windowMs})`);
    if (!Number.isSafeInteger(this.maxEntries) || this.maxEntries < 1) throw new RangeError(`presence: maxEntriesPerTenant must be a positive integer (got ${this.maxEntries})`);
    this.redis = config.redis;
    this.keyPrefix = `${config.keyPrefix}presence:`;
    defineScript(this.redis, 'chatPresenceHeartbeat', 'presence/lua/heartbeat.lua', 1);
  }

  async heartbeat(tenant_id: string, user_id: string, now: number): Promise<void> {
    this.assertOpen();
    const at = Math.floor(now);
    const rememberMs = this.windowMs * REMEMBER_WINDOWS;
    await this.redis.chatPresenceHeartbeat(this.keyPrefix + tenant_id, user_id, at, at - rememberMs, rememberMs, this.maxEntries);
  }

  async statuses(tenant_id: string, user_ids: readonly string[], now: number): Promise<PresenceEntry[]> {
    this.assertOpen();
    const ids = [...new Set(user_ids)];
    if (ids.length === 0) return [];
    const scores = await this.redis.zmscore(this.keyPrefix + tenant_id, ids);
    return ids.map((user_id, i) => {
      const score = scores[i];
      const at = score === null || score === undefined ? null : Number(score);
      return {
        user_id,
        status: at !== null && now - at <= this.windowMs ? 'online' : 'offline',
        last_seen_at: at === null ? null : new Date(at).toISOString(),
      };
    });
  }

  /** Quits the connection (it is the driver's own); a dead connection is dropped, not awaited. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.redis.status === 'ready') await this.redis.quit();
    else this.redis.disconnect();
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('presence is closed');
  }
}
