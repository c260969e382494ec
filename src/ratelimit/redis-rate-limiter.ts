/**
 * Shared rate limiter: the sliding-window state of each key lives in Redis, so a limit holds
 * across every node of the cluster.
 *
 * Per key one hash `<keyPrefix>rl:<key>` {s: window start, p: prev, c: curr}, read and updated
 * by lua/sliding-window.lua in one EVALSHA: the script is atomic, so concurrent hits from any
 * node are serialized per key (no two take the last unit), and it is a port of hit() in
 * sliding-window.ts, so decisions are bit-identical to the memory driver's. The hash expires
 * once its two windows have passed, so idle keys cost nothing.
 *
 * `now` comes from the caller (injectable), never from Redis TIME. Nodes' clocks are assumed
 * NTP-close: a node whose clock lags only sees the held window start (see types.ts).
 *
 * Errors: when Redis cannot be reached, consume() rejects once the connection's retry budget
 * (maxRetriesPerRequest, see redis/client.ts) is spent; callers decide whether to fail open.
 * There is no consumeSync(): every decision is a round trip.
 */
import type { Result } from 'ioredis';
import type { RedisClient } from '../redis/client.ts';
import type { RateRule } from '../config/index.ts';
import { defineScript } from '../redis/scripts.ts';
import { validateRule } from './sliding-window.ts';
import type { RateDecision, RateLimiter, RedisRateLimiterConfig } from './types.ts';

/** allowed (0/1), remaining, resetSeconds, retryAfterSeconds */
type HitReply = [number, number, number, number];

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** lua/sliding-window.lua: KEYS[1] = state hash; limit, window ms, now ms. */
    chatRateLimitHit(key: string, limit: number, windowMs: number, now: number): Result<HitReply, Context>;
  }
}

export class RedisRateLimiter implements RateLimiter {
  readonly driver = 'redis' as const;
  private readonly redis: RedisClient;
  private readonly keyPrefix: string;
  private readonly clock: () => number;
  private closed = false;

  constructor(config: RedisRateLimiterConfig, clock: () => number = Date.now) {
    this.redis = config.redis;
    this.keyPrefix = `${config.keyPrefix}rl:`;
    this.clock = clock;
    defineScript(this.redis, 'chatRateLimitHit', 'ratelimit/lua/sliding-window.lua', 1);
  }

  async consume(key: string, rule: RateRule, now: number = this.clock()): Promise<RateDecision> {
    if (this.closed) throw new Error('rate limiter is closed');
    const w = validateRule(rule);
    const [allowed, remaining, resetSeconds, retryAfterSeconds] = await this.redis.chatRateLimitHit(
      this.keyPrefix + key,
      rule.limit,
      w,
      Math.floor(now),
    );
    return { allowed: allowed === 1, limit: rule.limit, remaining, resetSeconds, retryAfterSeconds };
  }

  /** Quits the connection (it is the limiter's own); a dead connection is dropped, not awaited. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.redis.status === 'ready') await this.redis.quit();
    else this.redis.disconnect();
  }
}
