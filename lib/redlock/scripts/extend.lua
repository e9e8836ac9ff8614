-- extend.lua: compare-and-pexpire. If every lock key holds the token, make each live at least
-- ttl more (PEXPIRE GT never shortens a lease, so a failed extend leaves the old validity
-- intact) and count the extension (and the new ttl) in the holder metadata.
--
-- KEYS[1 .. n]         <prefix>lock:<resource>
-- KEYS[n+1 .. 2n]      <prefix>meta:<resource>
-- ARGV[1]              token
-- ARGV[2]              ttl in ms
--
-- Reply: 1 extended; 0 lost (a key does not hold the token; nothing was written)
local n = #KEYS / 2

for i = 1, n do
  if redis.call('GET', KEYS[i]) ~= ARGV[1] then
    return 0
  end
end

for i = 1, n do
  redis.call('PEXPIRE', KEYS[i], ARGV[2], 'GT')
  local meta = KEYS[i + n]
  if redis.call('EXISTS', meta) == 1 then
    redis.call('HINCRBY', meta, 'extensions', 1)
    redis.call('HSET', meta, 'ttlMs', ARGV[2])
    redis.call('PEXPIRE', meta, ARGV[2], 'GT')
  end
end
return 1
