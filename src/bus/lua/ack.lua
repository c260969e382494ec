-- A job is done (its handler resolved, or the retry policy gave up): it leaves the queue.
--
-- KEYS[1] job stream; ARGV[1] consumer group, ARGV[2] entry id
-- Answers 1 if the job was still pending, 0 if another consumer already finished it.

local acked = redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
return acked
