-- fence.lua: second round of a fenced acquire, sent to the nodes that granted the first round.
-- If every lock key still holds the token, raise the node's fence register to the fence
-- (register = max(register, fence)) and record the fence in the holder metadata.
--
-- KEYS[1]              <prefix>fence            node fence register (string, no TTL)
-- KEYS[2 .. 1+n]       <prefix>lock:<resource>
-- KEYS[2+n]            <prefix>meta:<token>
-- ARGV[1]              token
-- ARGV[2]              fence (decimal integer)
-- ARGV[3]              the holder metadata with the fence in it (JSON), written only over an
--                      existing metadata key, keeping its TTL; '' = leave the metadata alone
--
-- Reply: 1 confirmed (the register is now >= fence); 0 lost (a key no longer holds the token;
--        nothing was written)
local n = #KEYS - 2

for i = 2, 1 + n do
  if redis.call('GET', KEYS[i]) ~= ARGV[1] then
    return 0
  end
end

local register = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[2]) > register then
  redis.call('SET', KEYS[1], ARGV[2])
end

if ARGV[3] ~= '' then
  redis.call('SET', KEYS[2 + n], ARGV[3], 'XX', 'KEEPTTL')
end
return 1
