-- Takes a failed job back from its consumer and queues it again for its next attempt: in the
-- delayed set, or straight into the stream when the retry policy asks for no delay.
--
-- KEYS[1] job stream, KEYS[2] delayed jobs
-- ARGV[1] consumer group, ARGV[2] entry id, ARGV[3] delay in ms, ARGV[4] attempt of the next
-- delivery, ARGV[5] job JSON
-- Answers the delay, or -1 when the job was no longer pending (another consumer finished it).

if redis.call('XACK', KEYS[1], ARGV[1], ARGV[2]) == 0 then
  return -1
end
redis.call('XDEL', KEYS[1], ARGV[2])
local delay = tonumber(ARGV[3])
if delay <= 0 then
  redis.call('XADD', KEYS[1], '*', 'j', ARGV[5], 'a', ARGV[4])
  return 0
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- The entry id keeps members unique when equal jobs wait at the same attempt.
redis.call('ZADD', KEYS[2], now + delay, ARGV[2] .. '\n' .. ARGV[4] .. '\n' .. ARGV[5])
return delay
