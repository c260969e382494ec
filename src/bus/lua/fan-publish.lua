-- Appends one event to a fan shard (redis-fan-log.ts): the event once, with the channels it is
-- for, whatever their number. Every node reads the shard and hands the event to its own
-- listeners of those channels.
--
-- KEYS[1] stream  (entries: e = epoch, p = id of the previous entry of the epoch, or '',
--                  m = "\n" .. channels joined by "\n" .. "\n", d = event JSON)
-- KEYS[2] meta    (hash: epoch = the history's generation, last = id of the newest entry)
-- ARGV[1] epoch to take if the shard has no history (digits, chosen by the caller)
-- ARGV[2] event JSON
-- ARGV[3] channels, as in field m
-- ARGV[4] publish time in epoch ms, or '' for the server's clock
-- ARGV[5] maxAgeMs (approximate age trim; fan-read-since.lua applies the exact limit)
-- ARGV[6] most entries kept (approximate: the shard's memory bound)
-- ARGV[7] the shard's pub/sub channel (its hash tag: on a Redis Cluster it lives in this slot)
-- ARGV[8] 'sharded': SPUBLISH (sharded pub/sub, Redis 7); otherwise PUBLISH
-- The entry is also pushed on the shard's pub/sub channel, as
-- `<epoch> <entry id> <previous id>` .. m .. d: the nodes' readers get it without asking (one
-- write per node, no command), and read the stream only to catch up.
-- Answers { epoch, entry id, id of the previous entry of the epoch ('0-0' after an empty epoch
-- fixed by head.lua, or '') }.
--
-- The keys never expire: a shard's epoch must outlive quiet hours, or every node would see a
-- new history (a gap for all its streams) at the next message. Trims keep the stream bounded.

local stream, meta = KEYS[1], KEYS[2]

-- The publish time: the caller's (tests inject it), or the server's clock, which XADD's own id
-- ('*') takes without a TIME call.
local now = tonumber(ARGV[4])

-- A history exists while the meta hash does. Unlike publish.lua, a stream lost on its own
-- (deleted, evicted) while its meta stayed continues the epoch: every entry names its
-- predecessor (p), so a reader behind the lost entries still finds the gap (live in
-- redis-fan-log.ts, on a resume in fan-read-since.lua), and one at the newest entry lost
-- nothing. That saves an EXISTS per message: each redis.call costs a busy Redis several µs of
-- glue (docs/benchmarks.md).
local state = redis.call('HMGET', meta, 'epoch', 'last')
local epoch, stored = state[1], state[2]
local last = false
if epoch and stored then
  last = stored
else
  redis.call('DEL', stream, meta)
  epoch = ARGV[1]
end

local function parse(id)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  return tonumber(ms), tonumber(seq)
end

-- Ids increase: never at or below `last`, whatever the clocks say.
local lms, lseq = -1, 0
if last then
  lms, lseq = parse(last)
end
local function append(id)
  return redis.call('XADD', stream, 'MAXLEN', '~', ARGV[6], id, 'e', epoch, 'p', last or '', 'm', ARGV[3], 'd', ARGV[2])
end
local id
if now then
  if lms >= now then
    id = append(string.format('%.0f-%.0f', lms, lseq + 1))
  else
    id = append(string.format('%.0f-0', now))
  end
else
  -- '*' is above the stream's own newest id; only a stream lost alone, under a server clock
  -- behind `last`, gives one at or below `last`: then that entry is replaced by the next id.
  id = append('*')
  local ims, iseq = parse(id)
  if ims < lms or (ims == lms and iseq <= lseq) then
    redis.call('XDEL', stream, id)
    id = append(string.format('%.0f-%.0f', lms, lseq + 1))
  end
end
local ms = parse(id)

-- The age trim once per second of publish time (the first entry of each second, and every entry
-- of a shard quieter than that): entries a second past maxAgeMs may stay, and readers apply the
-- exact limit anyway.
if math.floor(ms / 1000) ~= math.floor(lms / 1000) then
  redis.call('XTRIM', stream, 'MINID', '~', string.format('%.0f', math.max(0, ms - tonumber(ARGV[5]))))
end
redis.call('HSET', meta, 'epoch', epoch, 'last', id)
redis.call(ARGV[8] == 'sharded' and 'SPUBLISH' or 'PUBLISH', ARGV[7], epoch .. ' ' .. id .. ' ' .. (last or '') .. ARGV[3] .. ARGV[2])
return { epoch, id, last or '' }
