-- Adds a job to the work queue unless the queue is full.
--
-- KEYS[1] job stream (entries: j = job JSON, a = attempt), KEYS[2] delayed jobs (sorted set)
-- ARGV[1] job JSON, ARGV[2] maxQueuedJobs, ARGV[3] consumer group
-- Answers 1 when queued, 0 when full.

if redis.call('EXISTS', KEYS[1]) == 0 then
  -- The group starts at 0 so jobs queued before any consumer ran are delivered too.
  redis.call('XGROUP', 'CREATE', KEYS[1], ARGV[3], '0', 'MKSTREAM')
end
-- Acked jobs are deleted, so the stream holds exactly the waiting and running ones.
if redis.call('XLEN', KEYS[1]) + redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[2]) then
  return 0
end
redis.call('XADD', KEYS[1], '*', 'j', ARGV[1], 'a', '1')
return 1
