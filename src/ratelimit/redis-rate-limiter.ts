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
 * There is no consumeSync(): a decision without a lease is a round trip.
 *
 * Leases (`lease.maxTokens` > 1): a key hit again on this node within `lease.ms` of its last
 * grant asks for more hits at once (2, 4, ... up to maxTokens, and back down to what the last
 * lease used): the script counts them in the shared window as admitted, and this node hands them
 * out without Redis (consumeLeased) until they are used, `lease.ms` has passed, or the window
 * they were counted in ends on this node's clock, whichever comes first. Every guarantee of
 * types.ts holds, since a leased hit was counted no later than it is used and within its window;
 * what changes: hits leased by one node and not used (the user went quiet, or went on through
 * another node) count against the key until its window ends, so near its limit a key can be
 * refused a little early. The script grants more than one hit only while a quarter of what the
 * window has left covers them, so that waste is bounded by a quarter of the capacity left (the
 * last quarter goes one hit at a time), and `remaining` is this node's view (the count at the
 * grant, minus the leased hits used since). A key hit once in a while (a person writing) never
 * gets a lease: each of its hits is one script, as without leases.
 */
import type { Result } from 'ioredis';
import type { RedisClient } from '../redis/client.ts';
import type { RateRule } from '../config/index.ts';
import { defineScript } from '../redis/scripts.ts';
import { validateRule } from './sliding-window.ts';
import type { RateDecision, RateLimiter, RedisRateLimiterConfig } from './types.ts';

/** allowed (0/1), remaining, resetSeconds, retryAfterSeconds, granted */
type HitReply = [number, number, number, number, number];

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** lua/sliding-window.lua: KEYS[1] = state hash; limit, window ms, now ms, hits wanted. */
    chatRateLimitHit(key: string, limit: number, windowMs: number, now: number, want: number): Result<HitReply, Context>;
  }
}

/** Hits of one key counted in Redis and not handed out yet, or the record of the last grant. */
interface Lease {
  limit: number;
  windowMs: number;
  /** Hits left to hand out. */
  tokens: number;
  /** No hit is handed out at or after this instant (ms, this node's clock). */
  until: number;
  /** When the grant was made, and how many hits it counted and handed out so far. */
  grantedAt: number;
  granted: number;
  used: number;
  /** `remaining` as the script answered it (after counting every granted hit). */
  remaining: number;
  /** When the window frees all its capacity (grant time + resetSeconds). */
  resetAt: number;
}

export interface RateLeaseOptions {
  /** Most hits counted at once for a key (1: no leases, every hit is a script). */
  maxTokens: number;
  /** How long leased hits may be handed out after the grant, and how close two hits of a key must be for it to get a lease. */
  ms: number;
}

/** Lease records kept for keys gone quiet are dropped past this many (checked every 4,096 grants). */
const SWEEP_EVERY = 4096;

export class RedisRateLimiter implements RateLimiter {
  readonly driver = 'redis' as const;
  private readonly redis: RedisClient;
  private readonly keyPrefix: string;
  private readonly clock: () => number;
  private readonly lease: RateLeaseOptions;
  private readonly leases = new Map<string, Lease>();
  private grants = 0;
  private closed = false;

  constructor(config: RedisRateLimiterConfig, clock: () => number = Date.now) {
    this.redis = config.redis;
    this.keyPrefix = `${config.keyPrefix}rl:`;
    this.clock = clock;
    const lease = config.lease ?? { maxTokens: 1, ms: 1000 };
    if (!Number.isSafeInteger(lease.maxTokens) || lease.maxTokens < 1 || lease.maxTokens > 1000) throw new RangeError(`rate limit lease.maxTokens must be 1 to 1000 (got ${lease.maxTokens})`);
    if (!Number.isSafeInteger(lease.ms) || lease.ms < 1) throw new RangeError(`rate limit lease.ms must be a positive integer (got ${lease.ms})`);
    this.lease = lease;
    defineScript(this.redis, 'chatRateLimitHit', 'ratelimit/lua/sliding-window.lua', 1);
  }

  /** A hit from this node's lease of `key`, or null when it holds none for it (ask consume()). */
  consumeLeased(key: string, rule: RateRule, now: number = this.clock()): RateDecision | null {
    const l = this.leases.get(key);
    if (!l || l.tokens < 1 || now >= l.until || now < l.grantedAt || l.limit !== rule.limit || l.windowMs !== rule.windowSeconds * 1000) return null;
    if (this.closed) throw new Error('rate limiter is closed');
    l.tokens -= 1;
    l.used += 1;
    return { allowed: true, limit: rule.limit, remaining: l.remaining + l.tokens, resetSeconds: Math.max(0, Math.ceil((l.resetAt - now) / 1000)), retryAfterSeconds: 0 };
  }

  async consume(key: string, rule: RateRule, now: number = this.clock()): Promise<RateDecision> {
    if (this.closed) throw new Error('rate limiter is closed');
    const w = validateRule(rule);
    const leased = this.consumeLeased(key, rule, now);
    if (leased) return leased;
    const at = Math.floor(now);
    const want = this.want(key, at);
    const [allowed, remaining, resetSeconds, retryAfterSeconds, granted] = await this.redis.chatRateLimitHit(this.keyPrefix + key, rule.limit, w, at, want);
    if (allowed === 1 && this.lease.maxTokens > 1) this.record(key, rule.limit, w, at, Number(granted) || 1, remaining, resetSeconds);
    return { allowed: allowed === 1, limit: rule.limit, remaining: remaining + (this.leases.get(key)?.tokens ?? 0), resetSeconds, retryAfterSeconds };
  }

  /** Hits to ask for: 1, unless the key's last grant on this node is recent (see the module comment). */
  private want(key: string, now: number): number {
    if (this.lease.maxTokens === 1) return 1;
    const last = this.leases.get(key);
    if (!last || now - last.grantedAt >= this.lease.ms || now < last.grantedAt) return 1;
    // Used up within its time: twice as many; else what it got used for (its time is not over).
    return Math.min(this.lease.maxTokens, last.tokens < 1 ? last.granted * 2 : Math.max(1, last.used));
  }

  /** Keeps the grant: its hits beyond the one answered now are handed out by consumeLeased. */
  private record(key: string, limit: number, w: number, now: number, granted: number, remaining: number, resetSeconds: number): void {
    const windowEnd = now - (now % w) + w;
    const held = this.leases.get(key);
    // Grants of concurrent calls add up; the latest grant's figures describe the key.
    const carried = held && held.limit === limit && held.windowMs === w && now < held.until ? held.tokens : 0;
    this.leases.set(key, {
      limit,
      windowMs: w,
      tokens: carried + granted - 1,
      until: Math.min(now + this.lease.ms, windowEnd),
      grantedAt: now,
      granted,
      used: 1,
      remaining,
      resetAt: now + resetSeconds * 1000,
    });
    if (++this.grants % SWEEP_EVERY === 0) this.sweep(now);
  }

  /** Drops the records of keys with no grant within the last lease time. */
  private sweep(now: number): void {
    for (const [key, l] of this.leases) if (now - l.grantedAt >= this.lease.ms) this.leases.delete(key);
  }

  /** Quits the connection (it is the limiter's own); a dead connection is dropped, not awaited. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.redis.status === 'ready') await this.redis.quit();
    else this.redis.disconnect();
  }
}
