-- A channel's current position: its epoch and the id of its newest entry, fixing a new, empty
-- epoch when the channel has no history, so that events published later continue it.
--
-- KEYS[1] stream, KEYS[2] meta (see publish.lua)
-- ARGV[1] epoch to take if the channel has no history (digits, chosen by the caller)
-- ARGV[2] TTL of the meta hash in ms, set when the epoch is empty
-- Answers { epoch, entry id }; the entry id is '0-0' for an empty epoch (nothing published in it
-- yet), which read-since.lua accepts and answers every later event for.

local stream, meta = KEYS[1], KEYS[2]

local epoch = redis.call('HGET', meta, 'epoch')
local last = redis.call('HGET', meta, 'last')
-- The same test as publish.lua's: a history exists when both keys do, or, for an empty epoch,
-- when its meta does (there is no stream before the first publish).
if epoch and last and last ~= '0-0' and redis.call('EXISTS', stream) == 1 then
  return { epoch, last }
end
if not (epoch and last == '0-0') then
  redis.call('DEL', stream)
  epoch = ARGV[1]
  redis.call('HSET', meta, 'epoch', epoch, 'last', '0-0')
end
-- An empty epoch lives as long as a history would after a publish: asked again, it lives on.
redis.call('PEXPIRE', meta, ARGV[2])
return { epoch, '0-0' }
