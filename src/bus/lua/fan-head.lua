-- A fan shard's current position (redis-fan-log.ts): its epoch and newest entry id, fixing a
-- new, empty epoch ('0-0') when the shard has no history. As head.lua, without an expiry: a
-- shard's keys live as long as the cluster (fan-publish.lua).
--
-- KEYS[1] stream, KEYS[2] meta (see fan-publish.lua)
-- ARGV[1] epoch to take if the shard has no history (digits, chosen by the caller)
-- Answers { epoch, entry id }.

local stream, meta = KEYS[1], KEYS[2]

local epoch = redis.call('HGET', meta, 'epoch')
local last = redis.call('HGET', meta, 'last')
if epoch and last and (last == '0-0' or redis.call('EXISTS', stream) == 1) then
  return { epoch, last }
end
redis.call('DEL', stream)
epoch = ARGV[1]
redis.call('HSET', meta, 'epoch', epoch, 'last', '0-0')
return { epoch, '0-0' }
