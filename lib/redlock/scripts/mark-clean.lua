-- mark-clean.lua: write a clean epoch sentinel ("this node holds no lost lock"), replacing any
-- running quarantine, and raise the fence register to the hybrid-logical-clock floor
-- now(ms) * 1000 (see acquire.lua): a node marked clean after losing its data lost its register
-- too, and must not hand out a fence lower than one already issued.
--
-- KEYS[1]              <prefix>epoch
-- KEYS[2]              <prefix>fence
-- ARGV[1]              maxTtlMs (recorded in the sentinel)
-- ARGV[2]              origin (free text: 'clean', 'fresh data directory', an operator's note)
--
-- Reply: {createdAt, register} node clock in ms, and the register after the call
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1],
  'createdAt', string.format('%.0f', now),
  'quarantineUntil', string.format('%.0f', now),
  'maxTtlMs', ARGV[1],
  'origin', ARGV[2])

local floor = now * 1000
local register = tonumber(redis.call('GET', KEYS[2]) or '0')
if floor > register then
  redis.call('SET', KEYS[2], string.format('%.0f', floor))
  register = floor
end
return {now, register}
