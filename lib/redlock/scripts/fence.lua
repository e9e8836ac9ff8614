-- fence.lua: second round of a fenced acquire, sent to the nodes that granted the first round.
-- If every lock key still holds the token, raise the node's fence register to the fence
-- (register = max(register, fence)) and record the fence in the holder metadata.
--
-- KEYS[1]              <prefix>fence            node fence register (string, no TTL)
-- KEYS[2 .. 1+n]       <prefix>lock:<resource>
-- KEYS[2+n .. 1+2n]    <prefix>meta:<resource>
-- ARGV[1]              token
-- ARGV[2]              fence (decimal integer)
--
-- Reply: 1 confirmed (the register is now >= fence); 0 lost (a key no longer holds the token;
--        nothing was written)
local n = (#KEYS - 1) / 2

for i = 2, 1 + n do
  if redis.call('GET', KEYS[i]) ~= ARGV[1] then
    return 0
  end
end

local register = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[2]) > register then
  redis.call('SET', KEYS[1], ARGV[2])
end

for i = 2 + n, 1 + 2 * n do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    redis.call('HSET', KEYS[i], 'fence', ARGV[2])
  end
end
return 1
