-- One hit of the sliding-window counter, atomically: a line-by-line port of hit() in
-- ../sliding-window.ts (same integer-millisecond arithmetic, same rounding), so the Redis and the
-- memory drivers decide bit-identically. Lua numbers are doubles like JS numbers, and
-- validateRule() keeps every product below 2^53, where both are exact.
--
-- KEYS[1]  hash {s = window start (epoch ms), p = prev, c = curr}
-- ARGV     limit, window length w (ms), now (integer epoch ms, from the caller: the caller's clock
--          is injectable, so Redis TIME is not used), and optionally `want`: hits to count at once
--          for a node's lease (redis-rate-limiter.ts), default 1
-- Returns  {allowed 0/1, remaining, resetSeconds, retryAfterSeconds, granted}: an admitted call
--          counts `granted` hits, 1 <= granted <= want. More than one only while a quarter of what
--          is left covers them, so the last quarter of a window's capacity goes one hit at a time;
--          with want = 1 every decision is the memory driver's.
--
-- Writes only when the state changes: an admitted hit, or a roll into a later window (the rolled
-- state is the one any later call would roll to, and keeping it makes a `now` that steps back
-- count as the window start, as in the memory driver). A refused hit within the held window
-- writes nothing, so hammering a refused key neither changes its counters nor its expiry.

local limit = tonumber(ARGV[1])
local w = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local want = tonumber(ARGV[4]) or 1

-- floor(a / b) for non-negative integers, exact even where a / b rounds up to an integer.
local function idiv(a, b)
  local q = math.floor(a / b)
  if q * b > a then
    q = q - 1
  elseif (q + 1) * b <= a then
    q = q + 1
  end
  return q
end

local function ceil_seconds(ms)
  return math.ceil(ms / 1000)
end

-- tostring() of a Lua number may use exponent notation; '%.0f' prints an integer double exactly.
local function int(x)
  return string.format('%.0f', x)
end

-- math.fmod is C fmod: exact, with the dividend's sign, like JS `%`.
local start = now - math.fmod(now, w)
local held = redis.call('HMGET', KEYS[1], 's', 'p', 'c')
local ws, prev, curr = start, 0, 0
if held[1] then
  ws, prev, curr = tonumber(held[1]), tonumber(held[2]), tonumber(held[3])
end

local rolled = false
if start > ws then
  if start - ws == w then prev = curr else prev = 0 end
  curr = 0
  ws = start
  rolled = true
end

-- A `now` before the key's window start (a clock stepped back) counts as the window start.
local elapsed = math.max(0, now - ws)
local t = ws + elapsed
local capacity = limit * w
local used = prev * (w - elapsed) + curr * w

-- The key vanishes once both counters weigh nothing: at ws + 2w on the caller's clock, set as a
-- relative TTL because the caller's `now` need not be Redis's clock. Always > w, since t < ws + w.
-- Set when the window starts (a new key, a roll): later hits of the window would set the same
-- deadline again (HSET keeps a key's expiry), so they skip the call, a few µs of Redis each.
local function save()
  redis.call('HSET', KEYS[1], 's', int(ws), 'p', int(prev), 'c', int(curr))
  if rolled or not held[1] then
    redis.call('PEXPIRE', KEYS[1], int(ws + 2 * w - t))
  end
end

if used + w <= capacity then
  local granted = 1
  if want > 1 then
    granted = math.max(1, math.min(want, idiv(idiv(capacity - used, w), 4)))
  end
  curr = curr + granted
  save()
  return {1, idiv(capacity - used - granted * w, w), ceil_seconds(ws + 2 * w - t), 0, granted}
end

if rolled then save() end

-- Earliest instant a hit is admitted if nothing else arrives (see sliding-window.ts).
local admit_at
if curr <= limit - 1 then
  admit_at = ws + w - idiv((limit - 1 - curr) * w, prev)
else
  admit_at = ws + 2 * w - idiv((limit - 1) * w, curr)
end

-- When the estimate reaches zero: drainsAt() in sliding-window.ts.
local drains_at = ws
if curr > 0 then
  drains_at = ws + 2 * w
elseif prev > 0 then
  drains_at = ws + w
end

return {0, 0, ceil_seconds(drains_at - t), math.max(1, ceil_seconds(admit_at - t)), 0}
