/**
 * The rate-limit factory: one case per driver in RateLimitConfig. Adding the Redis driver is one
 * case here (and one member of the config union); the `never` check makes a forgotten case a
 * compile error.
 */
import type { RateLimitConfig } from '../config/index.ts';
import { MemoryRateLimiter } from './memory-rate-limiter.ts';
import type { RateLimiter } from './types.ts';

export type { RateDecision, RateLimiter } from './types.ts';
export { rateLimitHeaders } from './types.ts';

export function createRateLimiter(config: RateLimitConfig): RateLimiter {
  switch (config.driver) {
    case 'memory':
      return new MemoryRateLimiter();
    default: {
      const unknown: never = config.driver;
      throw new Error(`unknown rate limit driver: ${String(unknown)}`);
    }
  }
}
