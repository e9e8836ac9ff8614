-- acquire.lua: grant the lock keys of a multi-resource request on this node, all or nothing.
-- (A single resource needs no script: the lock core sends SET NX GET PX, see grant.ts.) The node's
-- quarantine and fence register are read with plain commands sent right after this call on the
-- same connection (see grant.ts), so this script only decides the grant.
--
-- KEYS[1 .. n]         <prefix>lock:<resource>  one per resource
-- KEYS[n+1]            <prefix>meta:<token>     holder metadata of this attempt
-- ARGV[1]              token (random, unique per attempt)
-- ARGV[2]              ttl in ms (the client checked 0 < ttl <= maxTtlMs)
-- ARGV[3]              holder metadata, a JSON object of strings ('' = write none)
--
-- Reply: 0                  granted: every lock key now holds the token with PX ttl
--        {i, holder}        contended: KEYS[i] is held (by token `holder`); nothing was written
local n = #KEYS - 1

-- All or nothing: check every key before writing any.
for i = 1, n do
  local holder = redis.call('GET', KEYS[i])
  if holder then
    return {i, holder}
  end
end

for i = 1, n do
  redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2])
end
if ARGV[3] ~= '' then
  redis.call('SET', KEYS[n + 1], ARGV[3], 'PX', ARGV[2])
end
return 0
