-- fence-many.lua: the fence confirmations one client sends a node in one batch, as one script call
-- (fence-group.ts says why this keeps every guarantee): for each member, in the order they were
-- issued, what fence.lua does; the register is read once and raised once, to the highest fence
-- among the members that still hold their keys (the same final state as raising it member by
-- member: register = max(register, fence) for each, with nothing running in between).
--
-- KEYS[1]              <prefix>epoch (the node's sentinel hash; its field `fence` is the register)
-- KEYS[2 ..]           every member's lock keys (<prefix>lock:<resource>), member after member
-- ARGV[1 ..]           per member: token, fence (decimal integer), the holder metadata with the fence in it
--                      (JSON; '' = leave the values alone), n (its number of keys)
--
-- A key holds the token when its value is the token, or starts with the token and a space (see
-- value.ts); the rewrite keeps the token, so ownership never changes here. It is SETRANGE from
-- offset 0, padded with spaces to the old length, not SET XX KEEPTTL: extend.lua says why, and why
-- it cannot create a key (the GET below saw each key holding the token in this same script).
--
-- Reply: one integer per member, in order: 1 confirmed (the register is now >= its fence); 0 lost
--        (a key no longer holds its token; nothing was written for it)
local replies = {}
local top = 0
local topText = nil
local k = 2
local a = 1
while a <= #ARGV do
  local token = ARGV[a]
  local fence = tonumber(ARGV[a + 1])
  local meta = ARGV[a + 2]
  local n = tonumber(ARGV[a + 3])
  local head = token .. ' '
  local held = true
  local values = {}
  for i = k, k + n - 1 do
    local value = redis.call('GET', KEYS[i])
    if not (value == token or (value and string.sub(value, 1, #head) == head)) then
      held = false
      break
    end
    values[i] = value
  end
  if held then
    if fence > top then
      top = fence
      topText = ARGV[a + 1]
    end
    if meta ~= '' then
      for i = k, k + n - 1 do
        local new = head .. meta
        if #new < #values[i] then new = new .. string.rep(' ', #values[i] - #new) end
        redis.call('SETRANGE', KEYS[i], 0, new)
      end
    end
    replies[#replies + 1] = 1
  else
    replies[#replies + 1] = 0
  end
  k = k + n
  a = a + 4
end

if topText then
  local register = tonumber(redis.call('HGET', KEYS[1], 'fence') or '0')
  if top > register then
    redis.call('HSET', KEYS[1], 'fence', topText)
  end
end
return replies
