-- Removes consumers that hold no pending job from the group: the given one (it stopped), and any
-- idle longer than the limit (a node that died or stopped without saying so, once its jobs were
-- claimed by others). A consumer with pending jobs is never removed: that would lose them.
--
-- KEYS[1] job stream; ARGV[1] consumer group, ARGV[2] consumer that stopped (or ''),
-- ARGV[3] idle limit in ms
-- Answers the number of consumers removed.

if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
local ok, consumers = pcall(redis.call, 'XINFO', 'CONSUMERS', KEYS[1], ARGV[1])
if not ok then
  return 0 -- no such group
end
local limit = tonumber(ARGV[3])
local removed = 0
for _, flat in ipairs(consumers) do
  local info = {}
  for i = 1, #flat, 2 do
    info[flat[i]] = flat[i + 1]
  end
  if tonumber(info['pending']) == 0 and (info['name'] == ARGV[2] or tonumber(info['idle']) > limit) then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], info['name'])
    removed = removed + 1
  end
end
return removed
