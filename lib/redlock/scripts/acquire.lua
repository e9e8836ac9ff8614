-- acquire.lua: grant every lock key of one request on this node, all or nothing, unless the node
-- is quarantined (it lost its data) or any of the keys is held.
--
-- KEYS[1]              <prefix>epoch            node epoch sentinel (hash, no TTL)
-- KEYS[2]              <prefix>fence            node fence register (string, no TTL)
-- KEYS[3 .. 2+n]       <prefix>lock:<resource>  one per resource
-- KEYS[3+n .. 2+2n]    <prefix>meta:<resource>  holder metadata, same order
-- ARGV[1]              token (random, unique per attempt)
-- ARGV[2]              ttl in ms (the client checked 0 < ttl <= maxTtlMs)
-- ARGV[3]              '1' check the epoch sentinel (quarantine); '0' skip it (explicitly unsafe)
-- ARGV[4]              maxTtlMs: the quarantine length when this call finds the sentinel missing
-- ARGV[5]              '1' fenced: reply with the fence register; '0' do not read it
-- ARGV[6 ..]           holder metadata as field, value pairs, written to every meta hash
--
-- Reply: {1, register}                    granted; register = this node's fence register (0 if unfenced)
--        {0, i, holder}                   contended: KEYS[2+i] is held (by token `holder`); nothing
--                                         was written
--        {2, quarantineUntil, discovered} quarantined until quarantineUntil (node clock, ms);
--                                         discovered = 1 when this call found the data loss
local n = (#KEYS - 2) / 2

if ARGV[3] == '1' then
  local epoch = redis.call('HMGET', KEYS[1], 'createdAt', 'quarantineUntil')
  if not epoch[1] then
    -- The sentinel is gone, so this node lost its data (restart without persistence, FLUSHALL, a
    -- new empty node) and with it any lock it had granted. Vote against until every such lock has
    -- expired: they were all set before now with a ttl <= maxTtl. max(server start, now) is now,
    -- which also covers a FLUSHALL on a node that never restarted.
    local t = redis.call('TIME')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    local info = redis.call('INFO', 'server')
    local uptime = tonumber(string.match(info, 'uptime_in_seconds:(%d+)')) or 0
    local started = now - uptime * 1000
    local quarantineUntil = math.max(started, now) + tonumber(ARGV[4])
    redis.call('HSET', KEYS[1],
      'createdAt', string.format('%.0f', now),
      'quarantineUntil', string.format('%.0f', quarantineUntil),
      'maxTtlMs', ARGV[4],
      'origin', 'quarantine',
      'serverStartedAt', string.format('%.0f', started))
    -- The fence register was lost too. Reseed it to a hybrid-logical-clock floor, now(ms) * 1000:
    -- fences are counters that grow by >= 1 per fenced grant, so the floor exceeds every fence
    -- issued before now as long as the cluster issues fewer than 1,000 fenced grants per ms and
    -- node clocks agree within the time between data losses. Registers only ever grow (max).
    local floor = now * 1000
    local register = tonumber(redis.call('GET', KEYS[2]) or '0')
    if floor > register then
      redis.call('SET', KEYS[2], string.format('%.0f', floor))
    end
    return {2, quarantineUntil, 1}
  end
  local quarantineUntil = tonumber(epoch[2] or '0')
  if quarantineUntil > tonumber(epoch[1]) then
    local t = redis.call('TIME')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    if now < quarantineUntil then
      return {2, quarantineUntil, 0}
    end
  end
end

-- All or nothing: check every key before writing any.
for i = 3, 2 + n do
  local holder = redis.call('GET', KEYS[i])
  if holder then
    return {0, i - 2, holder}
  end
end

for i = 3, 2 + n do
  redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2])
  local meta = KEYS[i + n]
  redis.call('DEL', meta)
  if #ARGV >= 7 then
    redis.call('HSET', meta, unpack(ARGV, 6))
    redis.call('PEXPIRE', meta, ARGV[2])
  end
end

local register = 0
if ARGV[5] == '1' then
  register = tonumber(redis.call('GET', KEYS[2]) or '0')
end
return {1, register}
