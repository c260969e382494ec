/**
 * The rate-limit port.
 *
 * Algorithm every driver implements (sliding-window counter, see sliding-window.ts):
 *  - Time is cut into fixed windows of `rule.windowSeconds`, aligned on the Unix epoch, so every
 *    driver and every node agrees on where a window starts.
 *  - Per key the state is two counters and a window start: `curr` (hits admitted in the current
 *    window) and `prev` (hits admitted in the window before). A hit at `elapsed` ms into the
 *    current window sees the estimate `prev * (window - elapsed) / window + curr` and is admitted
 *    when `estimate + 1 <= limit`. All arithmetic is on integer milliseconds, so a Redis Lua port
 *    computes bit-identical decisions.
 *
 * Guarantees (the contract suite in contract.ts checks each):
 *  - At most `limit` hits are admitted within any one aligned window.
 *  - A burst around a window boundary is bounded: within any interval that reaches `d` ms past a
 *    boundary, at most `limit + floor(limit * d / window)` hits are admitted, so an instantaneous
 *    burst is held to `limit` where a fixed window would admit `2 * limit`. (The counter is an
 *    approximation: only an interval close to a whole window long can approach 2 * limit, and
 *    only after the previous window's hits all came at its very end.)
 *  - Under sustained pressure the admitted rate converges to `limit / window`.
 *  - A refused hit changes no state; hammering while refused does not extend the wait.
 *  - Keys are independent. A key must always be used with the same rule: callers namespace keys
 *    by policy (`send:<user>`, `client:<client>`); one key under two rules is undefined.
 *  - Time never runs backwards for a key: a `now` earlier than the key's window start counts as
 *    that window start.
 */
import type { RedisClient } from '../redis/client.ts';
import type { RateRule } from '../config/index.ts';

/**
 * What the factory builds: the in-process default (config/index.ts's RateLimitConfig) or the
 * shared Redis driver, which holds limits cluster-wide.
 */
export type RateLimiterConfig = { driver: 'memory' } | RedisRateLimiterConfig;

export interface RedisRateLimiterConfig {
  driver: 'redis';
  /** A connection of the limiter's own: close() quits it. */
  redis: RedisClient;
  /** Prepended to every key (`<keyPrefix>rl:<key>`), so several clusters can share one Redis. */
  keyPrefix: string;
  /** Hits of a busy key counted at once and handed out by this node (redis-rate-limiter.ts); default none. */
  lease?: { maxTokens: number; ms: number };
}

export interface RateDecision {
  allowed: boolean;
  /** The rule's limit, echoed for headers. */
  limit: number;
  /** Hits still admissible right now (after this one when it was admitted); 0 when refused. */
  remaining: number;
  /**
   * Whole seconds (rounded up) until the window frees all its capacity, i.e. until the estimate
   * has drained to zero and `remaining` would be back to `limit` if no further hit arrives.
   * 0 when nothing is counted; at most `2 * windowSeconds`.
   */
  resetSeconds: number;
  /**
   * Whole seconds to wait: >= 1 when !allowed, 0 when allowed. The smallest whole number of
   * seconds after which one hit would be admitted, assuming no other hit arrives meanwhile.
   */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  readonly driver: 'memory' | 'redis';
  /**
   * Counts one hit for `key` under `rule` and decides; a refused hit is not counted.
   * Atomic per key: concurrent calls for one key (from any node, for shared drivers) are
   * serialized, so no two calls can both take the last unit of capacity.
   * `now` is epoch milliseconds (injectable for tests); defaults to Date.now().
   * Rejects with RangeError for an invalid rule (limit or window below 1, not integers, or
   * `limit * windowMs` beyond exact integer range), and with a driver error when the backing
   * store cannot be reached (callers decide whether to fail open).
   */
  consume(key: string, rule: RateRule, now?: number): Promise<RateDecision>;
  /**
   * Optional: in-process drivers answer synchronously, with the same semantics as consume()
   * (but throwing instead of rejecting), so the edge's hot path needs no promise.
   */
  consumeSync?(key: string, rule: RateRule, now?: number): RateDecision;
  /**
   * Optional: a hit answered at once from what this node holds for the key (a lease of the
   * shared driver), or null when it holds nothing for it and consume() must ask. An answer is
   * always an admitted hit, counted as consume() would.
   */
  consumeLeased?(key: string, rule: RateRule, now?: number): RateDecision | null;
  /** Releases timers and connections. consume() after close() rejects. Idempotent. */
  close(): Promise<void>;
}

/** A structured-field sf-string: printable ASCII only, with `\` and `"` escaped (RFC 8941 §3.3.3). */
function sfString(value: string): string {
  if (!/^[\x20-\x7e]*$/.test(value)) {
    throw new RangeError(`rate limit policy name must be printable ASCII (got ${JSON.stringify(value)})`);
  }
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * The IETF httpapi rate-limit header fields (draft-ietf-httpapi-ratelimit-headers, structured
 * field form): `RateLimit-Policy: "<name>";q=<limit>;w=<window>` and
 * `RateLimit: "<name>";r=<remaining>;t=<reset>`, plus `Retry-After: <seconds>` when refused.
 */
export function rateLimitHeaders(policyName: string, rule: RateRule, d: RateDecision): Record<string, string> {
  const name = sfString(policyName);
  const headers: Record<string, string> = {
    'RateLimit-Policy': `${name};q=${rule.limit};w=${rule.windowSeconds}`,
    RateLimit: `${name};r=${d.remaining};t=${d.resetSeconds}`,
  };
  if (!d.allowed) headers['Retry-After'] = String(Math.max(1, d.retryAfterSeconds));
  return headers;
}
