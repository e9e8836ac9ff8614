-- extend.lua: compare-and-pexpire. If every lock key holds the token, make each live at least
-- ttl more (PEXPIRE GT never shortens a lease, so a failed extend leaves the old validity
-- intact) and count the extension (and the new ttl) in the holder metadata.
--
-- KEYS[1 .. n]         <prefix>lock:<resource>
-- KEYS[n+1]            <prefix>meta:<token>     JSON object of strings
-- ARGV[1]              token
-- ARGV[2]              ttl in ms
--
-- Reply: 1 extended; 0 lost (a key does not hold the token; nothing was written)
local n = #KEYS - 1

for i = 1, n do
  if redis.call('GET', KEYS[i]) ~= ARGV[1] then
    return 0
  end
end

for i = 1, n do
  redis.call('PEXPIRE', KEYS[i], ARGV[2], 'GT')
end
local meta = KEYS[n + 1]
local raw = redis.pcall('GET', meta)
if type(raw) == 'string' then
  local ok, fields = pcall(cjson.decode, raw)
  if ok and type(fields) == 'table' then
    fields['extensions'] = tostring((tonumber(fields['extensions']) or 0) + 1)
    fields['ttlMs'] = ARGV[2]
    redis.call('SET', meta, cjson.encode(fields), 'KEEPTTL')
  end
  redis.call('PEXPIRE', meta, ARGV[2], 'GT')
end
return 1
