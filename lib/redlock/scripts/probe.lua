-- probe.lua: what a grant needs to know about this node, read after the grant's SET on the same
-- connection (see grant.ts): the epoch sentinel, the fence register, and (in check mode) whether
-- this redis-server process is the one the sentinel speaks for.
--
-- The sentinel (<prefix>epoch, a hash without TTL) says "this node still holds every lock it
-- granted". Its fields: createdAt, quarantineUntil, maxTtlMs, origin, cause, runId (the
-- redis-server process it speaks for), prevRunId, serverStartedAt, evicted (evicted_keys at the
-- last check), fence (the node's fence register). The register lives in the same hash so that no
-- eviction or partial loss can take one and leave the other.
--
-- KEYS[1]              <prefix>epoch
-- KEYS[2]              <prefix>fence   the register's layout before it moved into the hash: read
--                                      once by a check, folded in with max, deleted
-- ARGV[1]              '0' fast: read only. '1' check: reconcile the sentinel with this process
--                      (below). Every EVAL of this script is a check (the lock core's fallback on
--                      NOSCRIPT sends the check's arguments; nothing SCRIPT LOADs it), so the script
--                      is in a process's cache only after a check ran in that process: a fast read
--                      that succeeds proves the sentinel was reconciled with the process it ran in.
-- ARGV[2]              the cluster's lease ceiling maxTtlMs (a quarantine lasts this long)
-- ARGV[3]              what a check detects: '2' data loss, restarts and evictions (the default);
--                      '1' data loss only (nodeChecks: false, UNSAFE); '0' nothing (quarantine: false)
-- ARGV[4]              '1' when the caller may start a quarantine on a node without a sentinel (it
--                      has seen the cluster's ceiling recorded on a node and agrees with it)
--
-- Check mode, atomically:
-- - no sentinel (createdAt): the node lost its data (restart without persistence, FLUSHALL, the
--   sentinel evicted, a new empty node). Quarantine until now + ceiling: every lock it had granted
--   was set before now with a ttl <= ceiling.
-- - a sentinel written by another process (runId differs, or none recorded): the node restarted and
--   may have loaded an older snapshot (RDB, an AOF from before a period without persistence, a
--   backup). Every lock it held was granted before this process started, so quarantine until
--   serverStart + ceiling (nothing when that has passed).
-- - evicted_keys grew since the last check of this process: a key of ours may have been evicted
--   (a maxmemory-policy changed at run time between checks). Quarantine until now + ceiling.
-- - A quarantine raises the register to the hybrid-logical-clock floor now(ms) * 1000: a node
--   restored from an old snapshot has an old register too.
--
-- Reply: {createdAt, quarantineUntil, runId, maxTtlMs, fence, [check only:] runIdNow, policy,
--        started (1 when this call started a quarantine), cause}
--        createdAt is false when the node has no sentinel (and none was written).
local epoch = KEYS[1]
if ARGV[1] == '0' then
  return redis.call('HMGET', epoch, 'createdAt', 'quarantineUntil', 'runId', 'maxTtlMs', 'fence')
end

local detect = ARGV[3]
local ceiling = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local server = redis.call('INFO', 'server')
local runId = string.match(server, 'run_id:(%x+)')
local uptime = tonumber(string.match(server, 'uptime_in_seconds:(%d+)')) or 0
local serverStart = now - uptime * 1000
local policy = string.match(redis.call('INFO', 'memory'), 'maxmemory_policy:([%w%-]+)') or 'unknown'
local evicted = tonumber(string.match(redis.call('INFO', 'stats'), 'evicted_keys:(%d+)')) or 0

local e = redis.call('HMGET', epoch, 'createdAt', 'quarantineUntil', 'runId', 'maxTtlMs', 'fence', 'evicted')
local register = tonumber(e[5] or '0') or 0
local legacy = redis.call('GET', KEYS[2])
if legacy then
  register = math.max(register, tonumber(legacy) or 0)
  redis.call('DEL', KEYS[2])
  redis.call('HSET', epoch, 'fence', string.format('%.0f', register))
end

local cause = false
local untilMs = 0
if not e[1] then
  if detect ~= '0' and ARGV[4] == '1' then
    cause = 'data-loss'
    untilMs = now + ceiling
  end
elseif detect == '2' and e[3] ~= runId then
  cause = 'restart'
  untilMs = serverStart + ceiling
elseif detect == '2' and evicted > (tonumber(e[6] or '0') or 0) then
  cause = 'eviction'
  untilMs = now + ceiling
end

local started = 0
if cause then
  -- The register may be as old as the data: raise it to the floor whatever the quarantine.
  local floor = now * 1000
  if floor > register then
    register = floor
    redis.call('HSET', epoch, 'fence', string.format('%.0f', floor))
  end
  local quarantineUntil = math.max(untilMs, now)
  if e[1] then quarantineUntil = math.max(quarantineUntil, tonumber(e[2] or '0') or 0) end
  if quarantineUntil > now then started = 1 end
  redis.call('HSET', epoch, 'createdAt', string.format('%.0f', now), 'quarantineUntil', string.format('%.0f', quarantineUntil),
    'origin', 'quarantine', 'cause', cause)
  if not e[1] or not e[4] then redis.call('HSET', epoch, 'maxTtlMs', ARGV[2]) end
end

if e[1] or cause then
  if e[3] ~= runId then
    redis.call('HSET', epoch, 'runId', runId, 'serverStartedAt', string.format('%.0f', serverStart))
    if e[3] then redis.call('HSET', epoch, 'prevRunId', e[3]) end
  end
  if tostring(evicted) ~= (e[6] or '') then redis.call('HSET', epoch, 'evicted', tostring(evicted)) end
end

local r = redis.call('HMGET', epoch, 'createdAt', 'quarantineUntil', 'runId', 'maxTtlMs', 'fence')
r[5] = r[5] or (register > 0 and string.format('%.0f', register)) or false
r[6] = runId
r[7] = policy
r[8] = started
r[9] = cause or ''
return r
