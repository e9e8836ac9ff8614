-- release.lua: compare-and-delete. Delete each lock key that holds the token and publish the
-- resource name so that waiters retry at once. Keys held by anyone else are never touched, so a
-- late or repeated release cannot hit a newer holder.
--
-- KEYS[1 .. n]         <prefix>lock:<resource>
-- ARGV[1]              token
-- ARGV[2]              pub/sub channel (<prefix>released), or '' to publish nothing (the cleanup
--                      of a failed attempt: waking waiters for it would only make them collide again)
-- ARGV[3 .. 2+n]       resource names, same order as KEYS
--
-- A key holds the token when its value is the token, or starts with the token and a space (the
-- holder metadata follows; see value.ts). Tokens contain no space.
--
-- Reply: the number of lock keys deleted (0 when none held the token)
local token = ARGV[1]
local head = token .. ' '
local deleted = 0

for i = 1, #KEYS do
  local value = redis.call('GET', KEYS[i])
  if value == token or (value and string.sub(value, 1, #head) == head) then
    redis.call('DEL', KEYS[i])
    if ARGV[2] ~= '' then
      -- pcall: the keys are deleted; a publish refused (an ACL user without the channel) must not turn
      -- this release into an error. Waiters then find the lock free by polling.
      redis.pcall('PUBLISH', ARGV[2], ARGV[2 + i])
    end
    deleted = deleted + 1
  end
end
return deleted
