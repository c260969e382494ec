-- Appends one event to a channel's stream and announces it on the channel's pub/sub channel, in
-- one step, so stream order and live order are the same order on every node.
--
-- KEYS[1] stream  (entries: d = event JSON, p = id of the previous entry of the epoch, or '')
-- KEYS[2] meta    (hash: epoch = the history's generation, last = id of the newest entry)
-- ARGV[1] epoch to take if the channel has no history (digits, chosen by the caller)
-- ARGV[2] event JSON
-- ARGV[3] publish time in epoch ms, or '' for the server's clock
-- ARGV[4] maxEventsPerChannel (exact trim: readSince must never see more than the window)
-- ARGV[5] maxAgeMs
-- ARGV[6] TTL of both keys in ms
-- ARGV[7] pub/sub channel (the channel's hash tag: on a Redis Cluster it lives in this slot)
-- ARGV[8] 'sharded': SPUBLISH (sharded pub/sub, Redis 7; the message stays in this shard);
--         otherwise PUBLISH
-- Answers { epoch, entry id, id of the previous entry of the epoch, '0-0' after an empty epoch
-- (head.lua), or '' }.

local stream, meta = KEYS[1], KEYS[2]

local now = tonumber(ARGV[3])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- A history exists only when both keys do: a stream without its meta (or the reverse) is what
-- is left of an expired or deleted channel, and starts over under a new epoch. The exception is
-- an empty epoch fixed by head.lua (last = '0-0'): nothing was published in it, so nothing can
-- have been lost, and it continues (its first entry's `p` is '0-0', which read-since.lua knows).
local epoch = redis.call('HGET', meta, 'epoch')
local last = false
local stored = epoch and redis.call('HGET', meta, 'last')
if epoch and stored == '0-0' then
  last = stored
elseif epoch and redis.call('EXISTS', stream) == 1 then
  last = stored
else
  redis.call('DEL', stream, meta)
  epoch = ARGV[1]
end

-- The entry id carries the publish time, so ages need no extra field. Ids must increase: a
-- publisher whose clock is behind the newest entry's takes that entry's millisecond.
local ms, seq = now, 0
if last then
  local lms, lseq = string.match(last, '^(%d+)-(%d+)$')
  lms, lseq = tonumber(lms), tonumber(lseq)
  if lms >= ms then
    ms, seq = lms, lseq + 1
  end
end
local id = string.format('%.0f-%.0f', ms, seq)

redis.call('XADD', stream, 'MAXLEN', ARGV[4], id, 'd', ARGV[2], 'p', last or '')
-- Age trim is approximate (whole nodes only: cheap); readSince applies the exact age limit.
redis.call('XTRIM', stream, 'MINID', '~', string.format('%.0f', math.max(0, now - tonumber(ARGV[5]))))
redis.call('HSET', meta, 'epoch', epoch, 'last', id)
redis.call('PEXPIRE', stream, ARGV[6])
redis.call('PEXPIRE', meta, ARGV[6])
redis.call(ARGV[8] == 'sharded' and 'SPUBLISH' or 'PUBLISH', ARGV[7], epoch .. '-' .. id .. '\n' .. ARGV[2])
return { epoch, id, last or '' }
