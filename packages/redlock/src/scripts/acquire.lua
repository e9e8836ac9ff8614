-- acquire.lua: grant the lock keys of a multi-resource request on this node, all or nothing.
-- (A single resource needs no script: the lock core sends SET NX GET PX, see grant.ts.) The node's
-- quarantine and fence register are read with plain commands sent right after this call on the
-- same connection (see grant.ts), so this script only decides the grant.
--
-- KEYS[1 .. n]         <prefix>lock:<resource>  one per resource
-- ARGV[1]              the value: '<token> <metadata JSON>' (see value.ts; the token is unique
--                      per attempt)
-- ARGV[2]              ttl in ms (the client checked 0 < ttl <= maxTtlMs)
--
-- Reply: 0                  granted: every lock key now holds the value with PX ttl
--        {i, holder}        contended: KEYS[i] is held (`holder` is its value); nothing was written

-- All or nothing: check every key before writing any.
for i = 1, #KEYS do
  local holder = redis.call('GET', KEYS[i])
  if holder then
    return {i, holder}
  end
end

for i = 1, #KEYS do
  redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2])
end
return 0
