/**
 * The rate-limit factory: one case per driver in RateLimiterConfig; the `never` check makes a
 * forgotten case a compile error. The memory driver stays the default (config/index.ts).
 */
import { MemoryRateLimiter } from './memory-rate-limiter.ts';
import { RedisRateLimiter } from './redis-rate-limiter.ts';
import type { RateLimiter, RateLimiterConfig } from './types.ts';

export type { RateDecision, RateLimiter, RateLimiterConfig, RedisRateLimiterConfig } from './types.ts';
export { rateLimitHeaders } from './types.ts';

export function createRateLimiter(config: RateLimiterConfig): RateLimiter {
  switch (config.driver) {
    case 'memory':
      return new MemoryRateLimiter();
    case 'redis':
      return new RedisRateLimiter(config);
    default: {
      const unknown: never = config;
      throw new Error(`unknown rate limit driver: ${String((unknown as { driver?: unknown }).driver)}`);
    }
  }
}
