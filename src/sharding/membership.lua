-- Cluster membership, one atomic step per call (see membership.ts).
--   KEYS[1]  sorted set: node id -> expiry (ms, Redis clock)
--   KEYS[2]  hash: node id -> node info (JSON); same hash tag as KEYS[1] (one slot on a Cluster)
--   ARGV[1]  mode: 'beat' (register or extend self), 'view' (read only), 'leave' (remove self)
--   ARGV[2]  channel to PUBLISH on when the live set changed (join, leave, expiry)
--   ARGV[3]  node id (beat, leave)
--   ARGV[4]  ttl ms (beat)
--   ARGV[5]  node info JSON (beat)
-- Every mode first drops the members whose expiry passed, so a node that stopped beating leaves
-- the set at the first call by any node after its expiry, whoever makes it.
-- Answers { previous info of ARGV[3] if it was live ('' otherwise), id1, info1, id2, info2, ... }
-- with the live members after the step.
local mode = ARGV[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local changed = false

local previous = ''
if mode ~= 'view' then
  local score = redis.call('ZSCORE', KEYS[1], ARGV[3])
  if score and tonumber(score) > now then
    previous = redis.call('HGET', KEYS[2], ARGV[3]) or ''
  end
end

local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
if #expired > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
  for _, id in ipairs(expired) do redis.call('HDEL', KEYS[2], id) end
  changed = true
end

if mode == 'beat' then
  local added = redis.call('ZADD', KEYS[1], now + tonumber(ARGV[4]), ARGV[3])
  redis.call('HSET', KEYS[2], ARGV[3], ARGV[5])
  -- A new member, or the same id now pointing elsewhere (a restart on another address).
  if added == 1 or previous ~= ARGV[5] then changed = true end
elseif mode == 'leave' then
  if redis.call('ZREM', KEYS[1], ARGV[3]) == 1 then changed = true end
  redis.call('HDEL', KEYS[2], ARGV[3])
end

if changed then redis.call('PUBLISH', ARGV[2], mode) end

local out = { previous }
local ids = redis.call('ZRANGE', KEYS[1], 0, -1)
for _, id in ipairs(ids) do
  out[#out + 1] = id
  out[#out + 1] = redis.call('HGET', KEYS[2], id) or ''
end
return out
