-- quarantine.lua: the epoch sentinel is missing, so this node lost its data (restart without
-- persistence, FLUSHALL, a new empty node) and with it any lock it had granted. Start the node's
-- quarantine: it votes against every acquire until each such lock has expired. Those were all set
-- before now with a ttl <= maxTtl, so until = max(server start, now) + maxTtl (max(…) is now,
-- which also covers a FLUSHALL on a node that never restarted). Idempotent: when another client
-- wrote the sentinel first, its quarantine stands and is returned.
--
-- KEYS[1]              <prefix>epoch            node epoch sentinel (hash, no TTL)
-- KEYS[2]              <prefix>fence            node fence register (string, no TTL)
-- ARGV[1]              maxTtlMs
--
-- Reply: {quarantineUntil, discovered}  node clock (ms); discovered = 1 when this call wrote it
local epoch = redis.call('HMGET', KEYS[1], 'createdAt', 'quarantineUntil')
if epoch[1] then
  return {tonumber(epoch[2] or epoch[1]), 0}
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local info = redis.call('INFO', 'server')
local uptime = tonumber(string.match(info, 'uptime_in_seconds:(%d+)')) or 0
local started = now - uptime * 1000
local quarantineUntil = math.max(started, now) + tonumber(ARGV[1])
redis.call('HSET', KEYS[1],
  'createdAt', string.format('%.0f', now),
  'quarantineUntil', string.format('%.0f', quarantineUntil),
  'maxTtlMs', ARGV[1],
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
return {quarantineUntil, 1}
