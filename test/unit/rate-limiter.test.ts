import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRateLimiter, rateLimitHeaders } from '../../src/ratelimit/index.ts';
import { rateLimiterContract } from '../../src/ratelimit/contract.ts';
import { MemoryRateLimiter } from '../../src/ratelimit/memory-rate-limiter.ts';
import type { RateDecision } from '../../src/ratelimit/types.ts';

rateLimiterContract('memory', async () => new MemoryRateLimiter({ sweepIntervalMs: 0 }));

describe('createRateLimiter', () => {
  it('builds the memory driver', async () => {
    const rl = createRateLimiter({ driver: 'memory' });
    assert.equal(rl.driver, 'memory');
    await rl.close();
  });
});

describe('MemoryRateLimiter bounds', () => {
  const rule = { limit: 3, windowSeconds: 10 };
  const t0 = 1_700_000_000_000;

  it('sweeps keys once both windows have passed, and only those', async () => {
    const rl = new MemoryRateLimiter({ sweepIntervalMs: 0 });
    await rl.consume('old', rule, t0);
    await rl.consume('recent', rule, t0 + 15_000);
    assert.equal(rl.sweep(t0 + 19_999), 0);
    assert.equal(rl.sweep(t0 + 20_000), 1);
    assert.equal(rl.size, 1);
    // The survivor still remembers its hit.
    assert.equal((await rl.consume('recent', rule, t0 + 15_000)).remaining, 1);
    await rl.close();
  });

  it('evicts the entry that least recently started a window past maxKeys', async () => {
    const rl = new MemoryRateLimiter({ sweepIntervalMs: 0, maxKeys: 2 });
    await rl.consume('a', rule, t0);
    await rl.consume('b', rule, t0);
    await rl.consume('a', rule, t0 + 10_000); // a rolls into a new window: b is now the stalest
    await rl.consume('c', rule, t0 + 10_000);
    assert.equal(rl.size, 2);
    assert.equal((await rl.consume('a', rule, t0 + 10_000)).remaining, 0, 'a kept its state');
    assert.equal((await rl.consume('b', rule, t0 + 10_000)).remaining, 2, 'b was forgotten');
  });

  it('runs its sweep timer without keeping the process alive', async () => {
    const rl = new MemoryRateLimiter({ sweepIntervalMs: 5 });
    await rl.consume('k', { limit: 1, windowSeconds: 1 }, Date.now() - 5_000);
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(rl.size, 0);
    await rl.close();
  });
});

describe('rateLimitHeaders', () => {
  const rule = { limit: 30, windowSeconds: 10 };
  const allowed: RateDecision = { allowed: true, limit: 30, remaining: 12, resetSeconds: 14, retryAfterSeconds: 0 };
  const refused: RateDecision = { allowed: false, limit: 30, remaining: 0, resetSeconds: 19, retryAfterSeconds: 3 };

  it('describes the policy and the current state in structured-field form', () => {
    assert.deepEqual(rateLimitHeaders('send', rule, allowed), {
      'RateLimit-Policy': '"send";q=30;w=10',
      RateLimit: '"send";r=12;t=14',
    });
  });

  it('adds Retry-After when refused', () => {
    assert.deepEqual(rateLimitHeaders('send', rule, refused), {
      'RateLimit-Policy': '"send";q=30;w=10',
      RateLimit: '"send";r=0;t=19',
      'Retry-After': '3',
    });
  });

  it('escapes the policy name as an sf-string and refuses what one cannot hold', () => {
    assert.equal(rateLimitHeaders('a"b\\c', rule, allowed)['RateLimit-Policy'], '"a\\"b\\\\c";q=30;w=10');
    assert.throws(() => rateLimitHeaders('naïve', rule, allowed), RangeError);
    assert.throws(() => rateLimitHeaders('line\nbreak', rule, allowed), RangeError);
  });

  it('formats what a real decision says', async () => {
    const rl = new MemoryRateLimiter({ sweepIntervalMs: 0 });
    const t = 1_700_000_002_500;
    await rl.consume('k', rule, t);
    const d = await rl.consume('k', rule, t);
    assert.deepEqual(rateLimitHeaders('send', rule, d), { 'RateLimit-Policy': '"send";q=30;w=10', RateLimit: '"send";r=28;t=18' });
    await rl.close();
  });
});
