-- Moves delayed jobs that are due back into the job stream (any consumer may run it, before it
-- reads; the server's clock decides what is due, so nodes need not agree on the time).
--
-- KEYS[1] job stream, KEYS[2] delayed jobs; ARGV[1] most jobs to move
-- Answers the ms until the next delayed job is due, or -1 when none waits.

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))) do
  local attempt, job = string.match(member, '^[^\n]*\n(%d+)\n(.*)$')
  if attempt then
    redis.call('XADD', KEYS[1], '*', 'j', job, 'a', attempt)
  end
  redis.call('ZREM', KEYS[2], member)
end
local nxt = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
if #nxt == 0 then
  return -1
end
return math.max(0, tonumber(nxt[2]) - now)
