-- One heartbeat, atomically: record it, then keep the tenant's set bounded.
--
-- KEYS[1]  sorted set of the tenant: member = user id, score = last heartbeat (epoch ms)
-- ARGV     user id, now (epoch ms), forget-before (epoch ms), remember (ms), max entries
--
-- ZADD GT only ever raises a score, so a late or reordered heartbeat (another node, a retry)
-- never moves last_seen_at back; a new member is added as usual.
redis.call('ZADD', KEYS[1], 'GT', ARGV[2], ARGV[1])
-- Entries remembered long enough go; the cut is exclusive, as in the memory driver.
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[3])
-- Past the size bound the stalest (lowest scores) go first.
local excess = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[5])
if excess > 0 then
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, excess - 1)
end
-- A tenant nobody heartbeats in any more vanishes whole once its newest entry is forgotten.
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 0
