/**
 * The sliding-window counter, as pure integer arithmetic on one key's state. The memory driver
 * calls it directly; the Redis driver's Lua script must be a line-by-line port of `hit` (same
 * integer-millisecond arithmetic, same rounding), so both drivers decide identically.
 *
 * Everything is scaled by the window length `w` (ms) to stay in integers:
 *   estimate * w = prev * (w - elapsed) + curr * w, admitted iff estimate * w + w <= limit * w.
 * validateRule() keeps every such product below 2^53, where doubles (and Lua numbers) are exact.
 */
import type { RateRule } from '../config/index.ts';
import type { RateDecision } from './types.ts';

/** Two counters and the start (epoch ms) of the window `curr` counts. */
export interface WindowState {
  windowStart: number;
  prev: number;
  curr: number;
}

/** Window length in ms, after checking the rule keeps the arithmetic exact. */
export function validateRule(rule: RateRule): number {
  const { limit, windowSeconds } = rule;
  if (!Number.isInteger(limit) || limit < 1 || !Number.isInteger(windowSeconds) || windowSeconds < 1) {
    throw new RangeError(`rate rule needs integer limit and windowSeconds >= 1 (got ${limit}/${windowSeconds}s)`);
  }
  const w = windowSeconds * 1000;
  if ((2 * limit + 1) * w > Number.MAX_SAFE_INTEGER) {
    throw new RangeError(`rate rule ${limit}/${windowSeconds}s is too large to count exactly`);
  }
  return w;
}

/** floor(a / b) for non-negative safe integers, exact even where a / b rounds up to an integer. */
function idiv(a: number, b: number): number {
  let q = Math.floor(a / b);
  if (q * b > a) q -= 1;
  else if ((q + 1) * b <= a) q += 1;
  return q;
}

const ceilSeconds = (ms: number): number => Math.ceil(ms / 1000);

/** A fresh state for a key first seen at `now`. */
export function emptyState(w: number, now: number): WindowState {
  return { windowStart: now - (now % w), prev: 0, curr: 0 };
}

/**
 * Counts one hit at `now` for `s` (mutated in place: rolled to now's window, `curr` incremented
 * when admitted) and decides. A refused hit leaves the counters as they were after the roll,
 * which is the same state any later call would roll to.
 */
export function hit(s: WindowState, limit: number, w: number, now: number): RateDecision {
  const start = now - (now % w);
  if (start > s.windowStart) {
    s.prev = start - s.windowStart === w ? s.curr : 0;
    s.curr = 0;
    s.windowStart = start;
  }
  // A `now` before the key's window start (clock stepped back) counts as the window start.
  const elapsed = Math.max(0, now - s.windowStart);
  const t = s.windowStart + elapsed;
  const capacity = limit * w;
  const used = s.prev * (w - elapsed) + s.curr * w;

  if (used + w <= capacity) {
    s.curr += 1;
    return {
      allowed: true,
      limit,
      remaining: idiv(capacity - used - w, w),
      resetSeconds: ceilSeconds(s.windowStart + 2 * w - t),
      retryAfterSeconds: 0,
    };
  }

  // Earliest instant a hit is admitted if nothing else arrives. The estimate only decreases
  // with time (it is continuous across the boundary), so the first admitting instant is exact.
  let admitAt: number;
  if (s.curr <= limit - 1) {
    // Still this window, once prev's weight has decayed: prev * (w - e) <= (limit - 1 - curr) * w.
    // s.prev > 0 here, or the hit would have been admitted.
    admitAt = s.windowStart + w - idiv((limit - 1 - s.curr) * w, s.prev);
  } else {
    // Next window, where curr becomes prev: curr * (w - e) <= (limit - 1) * w.
    admitAt = s.windowStart + 2 * w - idiv((limit - 1) * w, s.curr);
  }
  return {
    allowed: false,
    limit,
    remaining: 0,
    resetSeconds: ceilSeconds(drainsAt(s, w) - t),
    retryAfterSeconds: Math.max(1, ceilSeconds(admitAt - t)),
  };
}

/** When the estimate reaches zero: end of next window while curr counts, else end of this one. */
function drainsAt(s: WindowState, w: number): number {
  if (s.curr > 0) return s.windowStart + 2 * w;
  if (s.prev > 0) return s.windowStart + w;
  return s.windowStart;
}

/** When the state stops mattering (both counters weigh nothing), for expiry and Redis PEXPIREAT. */
export function expiresAt(s: WindowState, w: number): number {
  return s.windowStart + 2 * w;
}
