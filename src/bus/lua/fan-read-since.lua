-- The events of one channel in a fan shard after a given entry, up to another (redis-fan-log.ts),
-- or a reset when some entries in between are no longer held.
--
-- KEYS[1] stream, KEYS[2] meta (see fan-publish.lua)
-- ARGV[1] epoch of the position
-- ARGV[2] entry id to read after (ms-seq, canonical decimal)
-- ARGV[3] entry id to read up to, inclusive (ms-seq): what the reading node has delivered live
-- ARGV[4] now in epoch ms, or '' for the server's clock
-- ARGV[5] maxAgeMs
-- ARGV[6] "\n" .. channel .. "\n": entries whose m holds it are the channel's
-- Answers { 0 } for a reset, or { 1, id1, json1, id2, json2, ... } oldest first.

local stream, meta = KEYS[1], KEYS[2]
local after, upto = ARGV[2], ARGV[3]

local epoch = redis.call('HGET', meta, 'epoch')
if not epoch or epoch ~= ARGV[1] then
  return { 0 }
end
local last = redis.call('HGET', meta, 'last')
if not last or (last ~= '0-0' and redis.call('EXISTS', stream) == 0) then
  return { 0 }
end

local function parse(id)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  return tonumber(ms), tonumber(seq)
end
local function cmp(a, b)
  local am, as = parse(a)
  local bm, bs = parse(b)
  if am ~= bm then return am < bm and -1 or 1 end
  if as ~= bs then return as < bs and -1 or 1 end
  return 0
end

if cmp(after, last) > 0 then
  return { 0 } -- never written in this epoch (lost in a failover, or made up)
end
if cmp(after, upto) >= 0 then
  return { 1 }
end

local now = tonumber(ARGV[4])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local cutoff = math.max(0, now - tonumber(ARGV[5]))

-- The oldest entry still held: physically present and young enough.
local first = redis.call('XRANGE', stream, string.format('%.0f', cutoff), '+', 'COUNT', 1)[1]
if not first then
  if cmp(after, last) == 0 then return { 1 } end
  return { 0 }
end

local start
if cmp(after, first[1]) >= 0 then
  start = '(' .. after
elseif first[2][4] ~= '' and cmp(first[2][4], after) == 0 then
  start = first[1]
else
  return { 0 }
end

local needle = ARGV[6]
local out = { 1 }
for _, entry in ipairs(redis.call('XRANGE', stream, start, upto)) do
  if string.find(entry[2][6], needle, 1, true) then
    out[#out + 1] = entry[1]
    out[#out + 1] = entry[2][8]
  end
end
return out
