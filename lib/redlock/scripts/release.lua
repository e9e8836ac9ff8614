-- release.lua: compare-and-delete. Delete each lock key that holds the token, and the attempt's
-- metadata, and publish the resource name so that waiters retry at once. Keys held by anyone else
-- are never touched, so a late or repeated release cannot hit a newer holder.
--
-- KEYS[1 .. n]         <prefix>lock:<resource>
-- KEYS[n+1]            <prefix>meta:<token>     this attempt's metadata (ours alone: the token is unique)
-- ARGV[1]              token
-- ARGV[2]              pub/sub channel (<prefix>released), or '' to publish nothing (the cleanup
--                      of a failed attempt: waking waiters for it would only make them collide again)
-- ARGV[3 .. 2+n]       resource names, same order as KEYS
--
-- Reply: the number of lock keys deleted (0 when none held the token)
local n = #KEYS - 1
local deleted = 0

for i = 1, n do
  if redis.call('GET', KEYS[i]) == ARGV[1] then
    if n == 1 then
      -- One resource (the common case): one DEL for the lock key and the metadata.
      redis.call('DEL', KEYS[1], KEYS[2])
    else
      redis.call('DEL', KEYS[i])
    end
    if ARGV[2] ~= '' then
      redis.call('PUBLISH', ARGV[2], ARGV[2 + i])
    end
    deleted = deleted + 1
  end
end
if n > 1 or deleted == 0 then
  redis.call('DEL', KEYS[n + 1])
end
return deleted
