/**
 * The contract every RateLimiter driver passes, as node:test tests. A driver's test file calls
 * `rateLimiterContract('<driver>', make)` once; the suite is never copied per driver.
 *
 * `make` is called once per test and the limiter closed after it. Keys are unique per run, so a
 * shared store (Redis) needs no flushing. Time is injected through `now`, never slept on.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import type { RateRule } from '../config/index.ts';
import type { RateLimiter } from './types.ts';

/** A window start for `rule`, well inside the epoch so offsets stay aligned. */
function windowStart(rule: RateRule, n = 0): number {
  const w = rule.windowSeconds * 1000;
  const base = 1_700_000_000_000;
  return base - (base % w) + n * w;
}

/**
 * Asserts the burst bound of types.ts over every interval of admitted hits shorter than a window:
 * at most `limit` when the interval holds no boundary, at most `limit + floor(limit * d / w)`
 * when it crosses a boundary and ends `d` ms past it.
 */
function assertBurstBound(admitted: number[], rule: RateRule): void {
  const w = rule.windowSeconds * 1000;
  for (let i = 0; i < admitted.length; i += 1) {
    for (let j = i; j < admitted.length && admitted[j]! - admitted[i]! < w; j += 1) {
      const a = admitted[i]!;
      const b = admitted[j]!;
      const boundary = b - (b % w);
      const bound = boundary > a ? rule.limit + Math.floor((rule.limit * (b - boundary)) / w) : rule.limit;
      assert.ok(j - i + 1 <= bound, `${j - i + 1} hits admitted in [${a}, ${b}] exceed ${bound}`);
    }
  }
}

/** Deterministic pseudo-random numbers (LCG) for arrival patterns. */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

export function rateLimiterContract(name: string, make: () => Promise<RateLimiter>): void {
  describe(`RateLimiter contract: ${name}`, () => {
    const run = (title: string, body: (rl: RateLimiter, key: (label: string) => string) => Promise<void>): void => {
      it(title, async () => {
        const rl = await make();
        const prefix = `contract:${randomUUID()}:`;
        try {
          await body(rl, (label) => prefix + label);
        } finally {
          await rl.close();
        }
      });
    };

    run('admits up to the limit, then refuses', async (rl, key) => {
      const rule = { limit: 5, windowSeconds: 10 };
      const t = windowStart(rule) + 1234;
      for (let i = 0; i < 5; i += 1) assert.equal((await rl.consume(key('a'), rule, t)).allowed, true, `hit ${i + 1}`);
      const refused = await rl.consume(key('a'), rule, t);
      assert.equal(refused.allowed, false);
      assert.equal(refused.remaining, 0);
      assert.equal(refused.limit, 5);
    });

    run('remaining decreases by one per admitted hit; retryAfter is 0 when admitted', async (rl, key) => {
      const rule = { limit: 4, windowSeconds: 60 };
      const t = windowStart(rule) + 10;
      const seen: number[] = [];
      for (let i = 0; i < 4; i += 1) {
        const d = await rl.consume(key('a'), rule, t);
        assert.equal(d.retryAfterSeconds, 0);
        assert.equal(d.limit, 4);
        seen.push(d.remaining);
      }
      assert.deepEqual(seen, [3, 2, 1, 0]);
    });

    run('refused hits are not counted', async (rl, key) => {
      const rule = { limit: 30, windowSeconds: 10 };
      const t0 = windowStart(rule);
      for (const k of ['quiet', 'hammered']) {
        for (let i = 0; i < 30; i += 1) assert.equal((await rl.consume(key(k), rule, t0)).allowed, true);
      }
      for (let ms = 1; ms <= 10_000; ms += 50) {
        assert.equal((await rl.consume(key('hammered'), rule, t0 + ms)).allowed, false, `hammer at +${ms}ms`);
      }
      // Halfway into the next window the previous 30 weigh 15: exactly 15 more fit, for both keys.
      for (const k of ['quiet', 'hammered']) {
        let admitted = 0;
        for (let i = 0; i < 40; i += 1) if ((await rl.consume(key(k), rule, t0 + 15_000)).allowed) admitted += 1;
        assert.equal(admitted, 15, k);
      }
    });

    run('concurrent hits on one key never overshoot the limit', async (rl, key) => {
      const rule = { limit: 10, windowSeconds: 10 };
      const t = windowStart(rule) + 10;
      const decisions = await Promise.all(Array.from({ length: 25 }, () => rl.consume(key('a'), rule, t)));
      assert.equal(decisions.filter((d) => d.allowed).length, 10);
      assert.deepEqual(
        decisions.filter((d) => d.allowed).map((d) => d.remaining).sort((a, b) => b - a),
        [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
      );
    });

    run('keys are independent', async (rl, key) => {
      const rule = { limit: 2, windowSeconds: 10 };
      const t = windowStart(rule) + 5;
      await rl.consume(key('a'), rule, t);
      await rl.consume(key('a'), rule, t);
      assert.equal((await rl.consume(key('a'), rule, t)).allowed, false);
      const other = await rl.consume(key('b'), rule, t);
      assert.equal(other.allowed, true);
      assert.equal(other.remaining, 1);
    });

    run('the window slides: the previous window weighs by its overlap', async (rl, key) => {
      const rule = { limit: 30, windowSeconds: 10 };
      const t0 = windowStart(rule);
      for (let i = 0; i < 30; i += 1) await rl.consume(key('a'), rule, t0 + 100);
      // At the boundary the previous window still weighs fully.
      assert.equal((await rl.consume(key('a'), rule, t0 + 10_000)).allowed, false);
      // At 3/4 of the next window it weighs 30 * 1/4 = 7.5, leaving 22 whole hits.
      let admitted = 0;
      for (let i = 0; i < 40; i += 1) if ((await rl.consume(key('a'), rule, t0 + 17_500)).allowed) admitted += 1;
      assert.equal(admitted, 22);
      // Halfway into the window after, those 22 weigh 11: this hit leaves 30 - 11 - 1.
      assert.equal((await rl.consume(key('a'), rule, t0 + 25_000)).remaining, 18);
      // Once a whole window has passed without hits, nothing weighs any more.
      assert.equal((await rl.consume(key('a'), rule, t0 + 40_001)).remaining, 29);
    });

    run('retryAfterSeconds is >= 1 and the smallest whole wait that admits a hit', async (rl, key) => {
      let checked = 0;
      for (const rule of [{ limit: 1, windowSeconds: 1 }, { limit: 3, windowSeconds: 10 }, { limit: 30, windowSeconds: 10 }, { limit: 7, windowSeconds: 60 }]) {
        const w = rule.windowSeconds * 1000;
        for (const fillAt of [0, Math.floor(w / 3), w - 1]) {
          for (const askAfter of new Set([0, 1, Math.floor(w / 2), w - fillAt, w - fillAt + Math.floor(w / 4), Math.floor(1.5 * w)])) {
            const k = key(`${rule.limit}/${rule.windowSeconds}/${fillAt}/${askAfter}`);
            const t0 = windowStart(rule) + fillAt;
            for (let i = 0; i < rule.limit; i += 1) await rl.consume(k, rule, t0);
            const t = t0 + askAfter;
            const d = await rl.consume(k, rule, t);
            if (d.allowed) {
              assert.equal(d.retryAfterSeconds, 0);
              continue;
            }
            checked += 1;
            const r = d.retryAfterSeconds;
            assert.ok(Number.isInteger(r) && r >= 1 && r <= 2 * rule.windowSeconds, `retryAfter ${r}`);
            if (r > 1) assert.equal((await rl.consume(k, rule, t + (r - 1) * 1000)).allowed, false, `${r - 1}s must be too early`);
            assert.equal((await rl.consume(k, rule, t + r * 1000)).allowed, true, `${r}s must be enough`);
          }
        }
      }
      assert.ok(checked >= 20, `only ${checked} refusals exercised`);
    });

    run('resetSeconds is when the whole limit is available again', async (rl, key) => {
      const rule = { limit: 10, windowSeconds: 10 };
      const t = windowStart(rule) + 2_500;
      const first = await rl.consume(key('probe'), rule, t);
      assert.equal(first.resetSeconds, 18);
      for (const [k, wait, whole] of [['early', first.resetSeconds - 1, false], ['on-time', first.resetSeconds, true]] as const) {
        await rl.consume(key(k), rule, t);
        const d = await rl.consume(key(k), rule, t + wait * 1000);
        assert.equal(d.remaining === rule.limit - 1, whole, `${k}: remaining ${d.remaining}`);
      }
    });

    run('a burst across a window boundary never exceeds the limit', async (rl, key) => {
      const rule = { limit: 30, windowSeconds: 10 };
      const t0 = windowStart(rule);
      // 30 on the last millisecond, then 100 on the first milliseconds of the next window:
      // a fixed window would admit 60 within 2 ms.
      const admitted: number[] = [];
      for (let i = 0; i < 30; i += 1) if ((await rl.consume(key('edge'), rule, t0 + 9_999)).allowed) admitted.push(t0 + 9_999);
      for (let i = 0; i < 100; i += 1) {
        const at = t0 + 10_000 + (i % 2);
        if ((await rl.consume(key('edge'), rule, at)).allowed) admitted.push(at);
      }
      assert.equal(admitted.length, 30);
      assertBurstBound(admitted, rule);
    });

    run('admitted hits respect the burst bound under hammering and random arrivals', async (rl, key) => {
      const rule = { limit: 20, windowSeconds: 2 };
      const w = 2_000;
      const patterns: Array<[string, number[]]> = [];
      for (const offset of [0, 1, 999, 1_999]) {
        const times: number[] = [];
        for (let ms = offset; ms < 4 * w; ms += 3) times.push(windowStart(rule) + ms);
        patterns.push([`hammer+${offset}`, times]);
      }
      const rnd = lcg(42);
      const bursty: number[] = [];
      for (let ms = 0; ms < 6 * w; ms += Math.floor(rnd() * 40)) {
        const n = rnd() < 0.1 ? 15 : 1;
        for (let i = 0; i < n; i += 1) bursty.push(windowStart(rule) + ms);
      }
      patterns.push(['bursty', bursty]);
      for (const [label, times] of patterns) {
        const admitted: number[] = [];
        for (const at of times) if ((await rl.consume(key(label), rule, at)).allowed) admitted.push(at);
        assert.ok(admitted.length > 2 * rule.limit, `${label}: only ${admitted.length} admitted`);
        assertBurstBound(admitted, rule);
      }
    });

    run('rejects an invalid rule', async (rl, key) => {
      await assert.rejects(rl.consume(key('a'), { limit: 0, windowSeconds: 10 }), RangeError);
      await assert.rejects(rl.consume(key('a'), { limit: 5, windowSeconds: 0.5 }), RangeError);
    });

    it('rejects consume() after close()', async () => {
      const rl = await make();
      await rl.close();
      await rl.close();
      await assert.rejects(rl.consume(`contract:${randomUUID()}`, { limit: 1, windowSeconds: 1 }));
    });
  });
}
