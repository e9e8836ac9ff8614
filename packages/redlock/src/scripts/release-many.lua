-- release-many.lua: the releases one client sends a node in one batch (one tick of its event
-- loop: at high concurrency dozens of them), as one script call instead of one each: the same
-- compare-and-delete as release.lua, member by member, in the order they were issued
-- (release-group.ts says why this keeps every guarantee). A Lua call's fixed cost is most of a
-- release's server CPU, so this is what a batch of releases saves.
--
-- KEYS[1 ..]           every member's lock keys (<prefix>lock:<resource>), member after member
-- ARGV[1 ..]           per member: token, n (its number of keys), channel ('' = publish nothing, as for the
--                      cleanup of a failed attempt), then its n resource names in KEYS order
--
-- A key holds the token when its value is the token, or starts with the token and a space (see
-- value.ts). Keys held by anyone else are never touched.
--
-- Reply: one integer per member, in order: the number of its lock keys deleted
local replies = {}
local k = 1
local a = 1
while a <= #ARGV do
  local token = ARGV[a]
  local n = tonumber(ARGV[a + 1])
  local channel = ARGV[a + 2]
  local head = token .. ' '
  local deleted = 0
  for i = 0, n - 1 do
    local key = KEYS[k + i]
    local value = redis.call('GET', key)
    if value == token or (value and string.sub(value, 1, #head) == head) then
      redis.call('DEL', key)
      if channel ~= '' then
        redis.pcall('PUBLISH', channel, ARGV[a + 3 + i]) -- as in release.lua: a refused publish is no failure
      end
      deleted = deleted + 1
    end
  end
  replies[#replies + 1] = deleted
  k = k + n
  a = a + 3 + n
end
return replies
