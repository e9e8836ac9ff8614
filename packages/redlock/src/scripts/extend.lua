-- extend.lua: compare-and-pexpire. If every lock key holds the token, make each live at least
-- ttl more (PEXPIRE GT never shortens a lease, so a failed extend leaves the old validity
-- intact), then count the extension (and the new ttl) in the holder metadata of each key's value
-- where the node has the memory for it.
--
-- KEYS[1 .. n]         <prefix>lock:<resource>
-- ARGV[1]              token
-- ARGV[2]              ttl in ms
--
-- A key holds the token when its value is the token, or starts with the token and a space (see
-- value.ts). Rewriting the metadata keeps the token, so ownership never changes here.
--
-- The rewrite is SETRANGE from offset 0, padded with spaces to the old length (JSON allows them
-- after the object; value.ts trims them), not SET … KEEPTTL. Same value, same TTL, but a master
-- with keyspace notifications publishes `setrange` instead of `set`: the console's live events
-- (lib/server/events/keyspace-source.ts) then read every `set` on a lock key as a grant, and
-- are not sent a notification they would drop. SETRANGE creates a key that is not there (with no
-- TTL: a lock that would never expire) where SET XX would not; it cannot here: the GET above saw
-- the key holding the token in this same script, a script is atomic, keys do not expire during a
-- script (Redis checks expiry against the script's start time) and eviction does not run inside
-- one. So mutual exclusion and the fences are as before: same keys, same tokens, same TTLs.
--
-- Reply: 1 extended; 0 lost (a key does not hold the token; nothing was written)
local token = ARGV[1]
local head = token .. ' '
local values = {}

for i = 1, #KEYS do
  local value = redis.call('GET', KEYS[i])
  if not (value == token or (value and string.sub(value, 1, #head) == head)) then
    return 0
  end
  values[i] = value
end

-- The lease first: PEXPIRE needs no memory, so a node at maxmemory (noeviction) still extends.
-- The metadata after, best-effort (redis.pcall): a server that refuses a write inside a script
-- for want of memory (OOM; Redis 7 lets a script that has written once go on) must not cost the
-- holder its lock.
for i = 1, #KEYS do
  redis.call('PEXPIRE', KEYS[i], ARGV[2], 'GT')
end
for i = 1, #KEYS do
  local value = values[i]
  if #value > #head then
    local ok, fields = pcall(cjson.decode, string.sub(value, #head + 1))
    if ok and type(fields) == 'table' then
      fields['extensions'] = tostring((tonumber(fields['extensions']) or 0) + 1)
      fields['ttlMs'] = ARGV[2]
      local new = head .. cjson.encode(fields)
      if #new < #value then new = new .. string.rep(' ', #value - #new) end
      redis.pcall('SETRANGE', KEYS[i], 0, new)
    end
  end
end
return 1
