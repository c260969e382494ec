-- The events of a channel after a given id, or a reset when some of them are no longer held.
--
-- KEYS[1] stream, KEYS[2] meta (see publish.lua)
-- ARGV[1] epoch of the id
-- ARGV[2] entry id part of the id (ms-seq, canonical decimal)
-- ARGV[3] now in epoch ms, or '' for the server's clock
-- ARGV[4] maxAgeMs
-- Answers { 0 } for a reset, or { 1, id1, json1, id2, json2, ... } oldest first.

local stream, meta = KEYS[1], KEYS[2]
local after = ARGV[2]

local epoch = redis.call('HGET', meta, 'epoch')
if not epoch or epoch ~= ARGV[1] then
  return { 0 }
end
local last = redis.call('HGET', meta, 'last')
-- No stream: an empty epoch (head.lua, last = '0-0') before its first publish, else a history
-- whose events were deleted.
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
  return { 0 } -- never published in this epoch (another channel's id, or made up)
end

local now = tonumber(ARGV[3])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local cutoff = math.max(0, now - tonumber(ARGV[4]))

-- The oldest entry still held: physically present and young enough.
local first = redis.call('XRANGE', stream, string.format('%.0f', cutoff), '+', 'COUNT', 1)[1]
if not first then
  -- Nothing held: fine only if nothing followed the id.
  if cmp(after, last) == 0 then return { 1 } end
  return { 0 }
end

local start
if cmp(after, first[1]) >= 0 then
  start = '(' .. after
elseif first[2][4] ~= '' and cmp(first[2][4], after) == 0 then
  -- The id is the entry just before the oldest held one: nothing after it was dropped.
  start = first[1]
else
  return { 0 }
end

local out = { 1 }
for _, entry in ipairs(redis.call('XRANGE', stream, start, '+')) do
  out[#out + 1] = entry[1]
  out[#out + 1] = entry[2][2]
end
return out
