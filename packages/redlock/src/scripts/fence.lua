-- fence.lua: second round of a fenced acquire, sent to the nodes that granted the first round.
-- If every lock key still holds the token, raise the node's fence register to the fence
-- (register = max(register, fence)) and record the fence in the holder metadata.
--
-- KEYS[1]              <prefix>epoch            the node's sentinel hash; its field `fence` is the
--                                               node's fence register (see probe.lua)
-- KEYS[2 .. 1+n]       <prefix>lock:<resource>
-- ARGV[1]              token
-- ARGV[2]              fence (decimal integer)
-- ARGV[3]              the holder metadata with the fence in it (JSON): each lock key's value
--                      becomes '<token> <ARGV[3]>', keeping its TTL; '' = leave the values alone
--
-- A key holds the token when its value is the token, or starts with the token and a space (see
-- value.ts); the rewrite keeps the token, so ownership never changes here. It is SETRANGE from
-- offset 0, padded with spaces to the old length, not SET XX KEEPTTL: extend.lua says why, and why
-- it cannot create a key (the GET below saw each key holding the token in this same script).
--
-- Reply: 1 confirmed (the register is now >= fence); 0 lost (a key no longer holds the token;
--        nothing was written)
local token = ARGV[1]
local head = token .. ' '

local values = {}
for i = 2, #KEYS do
  local value = redis.call('GET', KEYS[i])
  if not (value == token or (value and string.sub(value, 1, #head) == head)) then
    return 0
  end
  values[i] = value
end

local register = tonumber(redis.call('HGET', KEYS[1], 'fence') or '0')
if tonumber(ARGV[2]) > register then
  redis.call('HSET', KEYS[1], 'fence', ARGV[2])
end

if ARGV[3] ~= '' then
  for i = 2, #KEYS do
    local new = head .. ARGV[3]
    if #new < #values[i] then new = new .. string.rep(' ', #values[i] - #new) end
    redis.call('SETRANGE', KEYS[i], 0, new)
  end
end
return 1
