/**
 * The rate-limit contract against the Redis driver on a real redis-server of this file's own,
 * plus what only a shared driver must prove: several nodes share one budget, decisions match the
 * memory driver's bit for bit, the key layout and expiry, and an unreachable Redis rejects.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';

import { rateLimiterContract } from '../src/ratelimit/contract.ts';
import { createRateLimiter } from '../src/ratelimit/index.ts';
import { MemoryRateLimiter } from '../src/ratelimit/memory-rate-limiter.ts';
import type { RateLimiter } from '../src/ratelimit/types.ts';
import { redisFactory, type RedisClient } from '../src/redis/client.ts';
import { freePort, quietConnection, startTestRedis, type TestRedis } from './helpers/redis.ts';

const PREFIX = `test:${randomUUID()}:`;
const T0 = 1_700_000_000_000;
let server: TestRedis;

/** A connection as a node opens it; the tests expect and assert failures, so errors are not logged. */
const connect = (url: string, name: string): RedisClient => quietConnection(url, PREFIX, name);

const limiter = (url: string = server.url): RateLimiter => createRateLimiter({ driver: 'redis', redis: connect(url, 'rate-limit-test'), keyPrefix: PREFIX });

const LEASE = { maxTokens: 8, ms: 1000 };
const leasing = (url: string = server.url): RateLimiter => createRateLimiter({ driver: 'redis', redis: connect(url, 'rate-limit-test'), keyPrefix: PREFIX, lease: LEASE });

/** Scripts Redis ran so far (INFO commandstats): how many hits went to Redis. */
async function scriptCalls(probe: RedisClient): Promise<number> {
  const info = String(await probe.info('commandstats'));
  return [...info.matchAll(/cmdstat_(?:evalsha|eval):calls=(\d+)/g)].reduce((n, m) => n + Number(m[1]), 0);
}

/** Deterministic pseudo-random numbers (LCG). */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

before(async () => {
  server = await startTestRedis();
});

after(async () => {
  await server.stop();
});

rateLimiterContract('redis', async () => limiter());
// Leases change no guarantee of the contract (the contract's keys are hit from one limiter).
rateLimiterContract('redis (leases of 8)', async () => leasing());

describe('RedisRateLimiter as a shared driver', () => {
  it('two nodes (separate connections) share one budget: concurrent hits admit exactly the limit', async () => {
    const [a, b] = [limiter(), limiter()];
    const key = `shared:${randomUUID()}`;
    const rule = { limit: 10, windowSeconds: 10 };
    try {
      const decisions = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? a : b).consume(key, rule, T0 + 10)));
      const admitted = decisions.filter((d) => d.allowed);
      assert.equal(admitted.length, 10);
      assert.deepEqual(admitted.map((d) => d.remaining).sort((x, y) => y - x), [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
      assert.equal((await b.consume(key, rule, T0 + 20)).allowed, false, 'node B sees what node A admitted');
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('decides bit-identically to the memory driver on a pseudo-random arrival sequence', async () => {
    const redis = limiter();
    const memory = new MemoryRateLimiter({ sweepIntervalMs: 0 });
    // Windows of 10 s and more: the keys' TTL runs on the real clock and must outlast the test.
    const rules = [
      { limit: 3, windowSeconds: 10 },
      { limit: 30, windowSeconds: 10 },
      { limit: 7, windowSeconds: 60 },
      { limit: 999_983, windowSeconds: 86_400 },
    ];
    const keys = rules.map((_, i) => `same:${randomUUID()}:${i}`);
    const rnd = lcg(7);
    let t = T0 - (T0 % 60_000) + 1;
    const outcomes: [number, number] = [0, 0];
    try {
      for (let step = 0; step < 2_500; step += 1) {
        const r = rnd();
        // Mostly small steps and bursts, sometimes a jump over windows, sometimes a clock stepping back.
        if (r < 0.15) t -= Math.floor(rnd() * 5_000);
        else if (r < 0.18) t += Math.floor(rnd() * 130_000);
        else if (r < 0.5) t += Math.floor(rnd() * 1_500);
        const i = Math.floor(rnd() * rules.length);
        const rule = rules[i]!;
        const key = keys[i]!;
        const d = await memory.consume(key, rule, t);
        assert.deepEqual(await redis.consume(key, rule, t), d, `step ${step}: ${key} at ${t}`);
        outcomes[d.allowed ? 0 : 1] += 1;
      }
      assert.ok(outcomes[0] > 500 && outcomes[1] > 500, `admitted/refused ${outcomes.join('/')}`);
    } finally {
      await Promise.all([redis.close(), memory.close()]);
    }
  });

  it('keeps one hash per key under the prefix, expiring after its two windows; a refused hit writes nothing', async () => {
    const rl = limiter();
    const probe = connect(server.url, 'probe');
    const key = `layout:${randomUUID()}`;
    const rule = { limit: 2, windowSeconds: 10 };
    try {
      await rl.consume(key, rule, T0 + 2_500);
      await rl.consume(key, rule, T0 + 2_500);
      const stored = `${PREFIX}rl:${key}`;
      assert.deepEqual(await probe.hgetall(stored), { s: String(T0), p: '0', c: '2' });
      const ttl = await probe.pttl(stored);
      // ws + 2w - now = 17.5 s on the caller's clock, less what elapsed since.
      assert.ok(ttl > 15_000 && ttl <= 17_500, `pttl ${ttl}`);
      await probe.pexpire(stored, 1_000_000);
      assert.equal((await rl.consume(key, rule, T0 + 5_000)).allowed, false);
      assert.deepEqual(await probe.hgetall(stored), { s: String(T0), p: '0', c: '2' });
      assert.ok((await probe.pttl(stored)) > 17_500, 'a refused hit left the expiry alone');
    } finally {
      await rl.close();
      await probe.quit();
    }
  });

  it('sets the expiry when a window starts, not again on later hits of that window', async () => {
    const rl = limiter();
    const probe = connect(server.url, 'probe');
    const key = `expiry:${randomUUID()}`;
    const rule = { limit: 5, windowSeconds: 10 };
    const stored = `${PREFIX}rl:${key}`;
    try {
      await rl.consume(key, rule, T0 + 1_000);
      const first = await probe.pttl(stored);
      assert.ok(first > 16_000 && first <= 19_000, `a new key: ws + 2w - now = 19 s (pttl ${first})`);
      await probe.pexpire(stored, 1_000_000);
      assert.equal((await rl.consume(key, rule, T0 + 2_000)).allowed, true);
      assert.deepEqual(await probe.hgetall(stored), { s: String(T0), p: '0', c: '2' });
      assert.ok((await probe.pttl(stored)) > 900_000, 'a later hit of the window kept the expiry (HSET keeps it; the deadline is the same)');
      assert.equal((await rl.consume(key, rule, T0 + 12_000)).allowed, true);
      assert.deepEqual(await probe.hgetall(stored), { s: String(T0 + 10_000), p: '2', c: '1' });
      const rolled = await probe.pttl(stored);
      assert.ok(rolled > 15_000 && rolled <= 18_000, `the next window set it again: 18 s (pttl ${rolled})`);
    } finally {
      await rl.close();
      await probe.quit();
    }
  });

  it('rejects (rather than hangs) when its Redis stops', { timeout: 15_000 }, async () => {
    const own = await startTestRedis();
    const rl = limiter(own.url);
    try {
      assert.equal((await rl.consume(`down:${randomUUID()}`, { limit: 1, windowSeconds: 1 }, T0)).allowed, true);
      await own.stop();
      await assert.rejects(rl.consume(`down:${randomUUID()}`, { limit: 1, windowSeconds: 1 }, T0));
    } finally {
      await rl.close();
      await own.stop();
    }
  });

  it('rejects when its Redis was never reachable', { timeout: 15_000 }, async () => {
    const rl = limiter(`redis://127.0.0.1:${await freePort()}`);
    try {
      await assert.rejects(rl.consume(`never:${randomUUID()}`, { limit: 1, windowSeconds: 1 }, T0));
    } finally {
      await rl.close();
    }
  });
});

describe('RedisRateLimiter leases', () => {
  const rule = { limit: 1000, windowSeconds: 60 };
  const W0 = T0 - (T0 % 60_000);

  /** Runs `fn` with a leasing limiter, a probe connection and a fresh key; closes both after. */
  async function withLeasing(name: string, fn: (rl: RateLimiter, probe: RedisClient, key: string) => Promise<void>): Promise<void> {
    const rl = leasing();
    const probe = connect(server.url, 'probe');
    try {
      await fn(rl, probe, `${name}:${randomUUID()}`);
    } finally {
      await rl.close();
      await probe.quit();
    }
  }

  it('a busy key asks Redis for 1, 2, 4, 8 hits, then 8 at a time; every hit is counted once in Redis', async () => {
    await withLeasing('busy', async (rl, probe, key) => {
      const before = await scriptCalls(probe);
      const remaining: number[] = [];
      for (let i = 0; i < 31; i += 1) {
        const d = await rl.consume(key, rule, W0 + 1_000 + i);
        assert.equal(d.allowed, true);
        remaining.push(d.remaining);
      }
      // 1 + 2 + 4 + 8 + 8 + 8 hits counted: 6 scripts for 31 hits, 0 handed out beyond them.
      assert.equal((await scriptCalls(probe)) - before, 6);
      assert.equal((await probe.hget(`${PREFIX}rl:${key}`, 'c')), '31');
      assert.deepEqual(remaining, Array.from({ length: 31 }, (_, i) => 1000 - 1 - i), 'remaining goes down one per hit');
    });
  });

  it('a key hit less often than the lease time never leases: one script per hit', async () => {
    await withLeasing('quiet', async (rl, probe, key) => {
      const before = await scriptCalls(probe);
      for (let i = 0; i < 5; i += 1) assert.equal((await rl.consume(key, rule, W0 + 1_000 + i * LEASE.ms)).allowed, true);
      assert.equal((await scriptCalls(probe)) - before, 5);
      assert.equal(await probe.hget(`${PREFIX}rl:${key}`, 'c'), '5');
    });
  });

  it('leased hits are not handed out after the lease time, nor after the window they were counted in', async () => {
    await withLeasing('edge', async (rl, probe, key) => {
      // A grant of 2 at 59.9 s into the window: its spare hit is for this window only.
      const end = W0 + 60_000;
      await rl.consume(key, rule, end - 100);
      await rl.consume(key, rule, end - 90); // asks for 2: one answered, one leased
      assert.equal(await probe.hget(`${PREFIX}rl:${key}`, 'c'), '3');
      const before = await scriptCalls(probe);
      await rl.consume(key, rule, end + 1); // the next window: to Redis, not from the lease
      assert.equal((await scriptCalls(probe)) - before, 1);
      assert.equal(await probe.hget(`${PREFIX}rl:${key}`, 's'), String(end), 'counted in the new window');
      // Within a window: a lease is over after its time.
      const other = `late:${randomUUID()}`;
      await rl.consume(other, rule, W0 + 1_000);
      await rl.consume(other, rule, W0 + 1_010); // a lease of 2
      const mid = await scriptCalls(probe);
      await rl.consume(other, rule, W0 + 1_010 + LEASE.ms);
      assert.equal((await scriptCalls(probe)) - mid, 1, 'the spare hit is not used after the lease time');
    });
  });

  it('nodes leasing one key never admit more than the limit in a window; the last quarter goes one hit at a time', async () => {
    const nodes = [leasing(), leasing(), leasing()];
    const key = `shared:${randomUUID()}`;
    const small = { limit: 100, windowSeconds: 60 };
    try {
      let admitted = 0;
      let refusedAt = -1;
      for (let i = 0; i < 300; i += 1) {
        const d = await nodes[i % 3]!.consume(key, small, W0 + 1_000 + i);
        if (d.allowed) admitted += 1;
        else if (refusedAt < 0) refusedAt = i;
      }
      assert.ok(admitted <= 100, `admitted ${admitted}`);
      // Spare hits held by the other two nodes when the key runs out are at most a quarter of
      // what was left at their grants: the key admits nearly its limit.
      assert.ok(admitted >= 90, `admitted ${admitted}`);
      assert.ok(refusedAt >= 90, `first refusal at hit ${refusedAt}`);
    } finally {
      await Promise.all(nodes.map((n) => n.close()));
    }
  });

  it('refuses a lease configuration out of range', () => {
    const redis = connect(server.url, 'unused');
    try {
      for (const lease of [{ maxTokens: 0, ms: 1000 }, { maxTokens: 1.5, ms: 1000 }, { maxTokens: 4, ms: 0 }]) {
        assert.throws(() => createRateLimiter({ driver: 'redis', redis, keyPrefix: PREFIX, lease }), RangeError, JSON.stringify(lease));
      }
    } finally {
      redis.disconnect();
    }
  });
});
