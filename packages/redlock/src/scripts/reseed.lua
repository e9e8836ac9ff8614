-- reseed.lua: the end of a reseed (reseed.ts): raise this node's fence register to `floor`, the
-- highest register read from enough other nodes after its quarantine ended, and clear the
-- sentinel's `reseed` flag, so that the node may vote again. Only for the quarantine the reseed was
-- started for (a compare-and-set on the sentinel's createdAt): a newer quarantine (another loss
-- found meanwhile) owes a reseed of its own, read after its own end.
--
-- KEYS[1]              <prefix>epoch
-- KEYS[2]              <prefix>fence   the register's old key: kept in step while it exists (probe.lua)
-- ARGV[1]              the sentinel's createdAt the reseed was started for
-- ARGV[2]              floor (decimal integer): the highest register of the other nodes read
--
-- Reply: {1, register} reseeded (the register after the call) | {0, reason} not applied: 'changed'
--        (another sentinel, or no reseed pending)
local epoch = KEYS[1]
local e = redis.call('HMGET', epoch, 'createdAt', 'reseed', 'fence')
if e[1] ~= ARGV[1] or e[2] ~= '1' then return {0, 'changed'} end
-- The register is the highest of the hash's field, the old key and the floor, carried as the text
-- it was read as (no float formatting of a 16-digit value). Never lower: a lower register would let a
-- later grant's fence repeat one already issued (fence order, fence-round.ts).
local register = tonumber(e[3] or '0') or 0
local text = e[3] or '0'
local legacy = redis.call('GET', KEYS[2])
if legacy and (tonumber(legacy) or 0) > register then
  register = tonumber(legacy)
  text = legacy
end
local floor = tonumber(ARGV[2]) or 0
if floor > register then
  register = floor
  text = ARGV[2]
end
redis.call('HSET', epoch, 'fence', text)
if legacy then redis.call('SET', KEYS[2], text) end
redis.call('HDEL', epoch, 'reseed')
return {1, text}
