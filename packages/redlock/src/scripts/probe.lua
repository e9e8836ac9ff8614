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
-- KEYS[2]              <prefix>fence   the register's layout before it moved into the hash: a check
--                                      folds it in (max) and keeps it in step while it exists; the
--                                      fence round raises only the hash's (README: upgrades)
-- KEYS[3]              <prefix>anchor  a key nothing ever writes once a check created it: the lock
--                                      core WATCHes it on its own connections, so that anything that
--                                      replaces the dataset in place (a sync, DEBUG RELOAD, SWAPDB,
--                                      FLUSHALL, a RESTORE of it, its eviction) aborts the next fast
--                                      probe's EXEC (grant-group.ts: the rollback detector)
-- ARGV[1]              '1' check: reconcile the sentinel with this process (below). '0' fast: read
--                      only, for nodes that refuse SCRIPT EXISTS (a proxy); elsewhere the fast
--                      probe is `SCRIPT EXISTS <this script's sha>` then `HMGET` (grant-group.ts).
--                      Every EVAL of this script is a check (the lock core's fallback on NOSCRIPT
--                      sends the check's arguments; nothing SCRIPT LOADs it), and the lock core
--                      sends it with a first line naming the epoch key, the detection level and the
--                      ceiling (grant-plan.ts), so each (prefix, level, ceiling) has a script of its
--                      own: the script is in a process's cache only after a check of exactly this
--                      kind ran in that process, and such a check reconciles (or, for a client whose
--                      ceiling is not the recorded one, changes nothing and is refused). A fast
--                      read that succeeds (EVALSHA) or follows `SCRIPT EXISTS` = 1 proves the
--                      sentinel was reconciled with that process.
-- ARGV[2]              the cluster's lease ceiling maxTtlMs (a quarantine lasts this long)
-- ARGV[3]              what a check detects: '2' data loss, restarts and evictions (the default);
--                      '1' data loss only (nodeChecks: false, UNSAFE); '0' nothing (quarantine: false)
-- ARGV[4]              '1' when the caller may start a quarantine on a node without a sentinel (it
--                      has seen the cluster's ceiling recorded on a node and agrees with it)
-- ARGV[5]              check mode: a cause the caller has evidence of and the node cannot see itself
--                      ('rollback': its WATCH on the anchor fired; 'clock-jump': the node's TIME moved
--                      against the caller's monotonic clock beyond the drift allowance), or ''. A full
--                      check starts that quarantine (now + ceiling) whatever else it finds.
--
-- Check mode, atomically. The ceiling of a quarantine is max(ARGV[2], the recorded maxTtlMs). Only a
-- full check (ARGV[3] '2') by a client whose ceiling is the recorded one reconciles (records this
-- process, its replication id and evicted_keys); any other check only reads, so that no unsafe or
-- misconfigured client can make a restart look reconciled:
-- - no sentinel (createdAt): the node lost its data (restart without persistence, FLUSHALL, the
--   sentinel evicted, a new empty node). Quarantine until now + ceiling: every lock it had granted
--   was set before now with a ttl <= ceiling.
-- - a sentinel written by another process (runId differs, or none recorded): the node restarted and
--   may have loaded an older snapshot (RDB, an AOF from before a period without persistence, a
--   backup). Every lock it held was granted before this process started, so quarantine until
--   serverStart + ceiling (nothing when that has passed), or now + ceiling when the process ever
--   synced from a master (master_replid2 set: a promoted replica's data is its old master's, as of
--   the sync, whenever that was).
-- - the same process with another replication id: its dataset was replaced by a sync (REPLICAOF
--   and back). Quarantine until now + ceiling.
-- - evicted_keys changed since the last check of this process (grew: evictions; fell: a CONFIG
--   RESETSTAT, which may hide them), or total_commands_processed fell (a RESETSTAT that brought
--   evicted_keys back to the value recorded): quarantine until now + ceiling.
-- - the same process ran a command that replaces or rewrites data wholesale since the last check
--   (INFO commandstats: the calls of REPLACING below, e.g. DEBUG RELOAD, SWAPDB, RESTORE, FLUSHALL,
--   REPLICAOF; fell: a RESETSTAT): its data may have gone back in time with the same run_id and
--   replication id, and a copy of its own data carries a sentinel naming this very process. This is
--   what protects a client that has no memory of the node (a fresh one, a new connection): the
--   evidence is in the process, not in the data. Quarantine 'rollback' until now + ceiling.
-- - A quarantine raises the register to the hybrid-logical-clock floor now(ms) * 1000: a node
--   restored from an old snapshot has an old register too. That floor trusts this node's clock, so
--   a quarantine for a cause that may have taken the register back (data-loss, restart, replaced,
--   rollback) also sets `reseed`: the node votes against, after its quarantine too, until a client
--   has raised its register to the highest register of enough other nodes read after the
--   quarantine's end (reseed.ts says why that covers every fence issued; scripts/reseed.lua).
--
-- Reply: check: {createdAt, quarantineUntil, runId, maxTtlMs, fence, runIdNow, policy, started (1
--        when this call started a quarantine), cause, TIME seconds, TIME microseconds, anchor (1: the
--        anchor exists now), reseed ('1': pending)}; fence is the max of the hash's and the old key's register;
--        createdAt is false when the node has no sentinel (and none was written).
--        fast: {createdAt, quarantineUntil, runId, maxTtlMs, fence, suspect, TIME seconds, TIME
--        microseconds, reseed}; suspect is '' or why a check must judge this read (the anchor is gone,
--        evicted_keys or the REPLACING calls moved since the last check, or a RESETSTAT): the same
--        evidence the fast transaction gives a connection that can WATCH (grant-group.ts).
local epoch = KEYS[1]
local FIELDS = {'createdAt', 'quarantineUntil', 'runId', 'maxTtlMs', 'fence'}

-- The register: the hash's, or the old key's when an old client raised that one higher.
local function registerOf(inHash)
  local legacy = redis.call('GET', KEYS[2])
  local register = tonumber(inHash or '0') or 0
  if legacy then register = math.max(register, tonumber(legacy) or 0) end
  return register, legacy ~= false
end

local function fmt(n) return string.format('%.0f', n) end

--@include _replacing.lua

if ARGV[1] == '0' then
  local r = redis.call('HMGET', epoch, 'createdAt', 'quarantineUntil', 'runId', 'maxTtlMs', 'fence', 'evicted', 'processed', 'replacing', 'reseed')
  local register = registerOf(r[5])
  if register > 0 then r[5] = fmt(register) end
  local stats = redis.call('INFO', 'stats')
  local suspect = ''
  if redis.call('EXISTS', KEYS[3]) == 0 then
    suspect = 'anchor'
  elseif (string.match(stats, 'evicted_keys:(%d+)') or '0') ~= (r[6] or '0') then
    suspect = 'evicted'
  elseif (tonumber(string.match(stats, 'total_commands_processed:(%d+)')) or 0) < (tonumber(r[7] or '0') or 0) then
    suspect = 'resetstat'
  elseif fmt(replacingCalls()) ~= (r[8] or '0') then
    suspect = 'replacing'
  end
  local t = redis.call('TIME')
  return {r[1], r[2], r[3], r[4], r[5], suspect, t[1], t[2], r[9] or ''}
end

local detect = ARGV[3]
local ceilingArg = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local server = redis.call('INFO', 'server')
local runId = string.match(server, 'run_id:(%x+)')
local uptime = tonumber(string.match(server, 'uptime_in_seconds:(%d+)')) or 0
-- uptime_in_seconds is floor(now) - floor(start) in whole seconds, so the start is before
-- now - (uptime - 1) s: take that bound (never after now), so a restart quarantine never ends
-- before start + ceiling (now - uptime s could be up to a second before the real start).
local serverStart = math.min(now, now - (uptime - 1) * 1000)
local replication = redis.call('INFO', 'replication')
local replid = string.match(replication, 'master_replid:(%x+)') or ''
local synced = (string.match(replication, 'master_replid2:(%x+)') or '0'):match('^0+$') == nil
local isReplica = string.match(replication, 'role:(%w+)') ~= 'master'
local policy = string.match(redis.call('INFO', 'memory'), 'maxmemory_policy:([%w%-]+)') or 'unknown'
local stats = redis.call('INFO', 'stats')
local evicted = tonumber(string.match(stats, 'evicted_keys:(%d+)')) or 0
-- Only grows within a process, but for CONFIG RESETSTAT: which also zeroes evicted_keys.
local processed = tonumber(string.match(stats, 'total_commands_processed:(%d+)')) or 0

local replacing = replacingCalls()
local forced = ARGV[5] or ''

local e = redis.call('HMGET', epoch, 'createdAt', 'quarantineUntil', 'runId', 'maxTtlMs', 'fence', 'evicted', 'replid', 'processed', 'replacing')
local recorded = tonumber(e[4] or '')
local ceiling = math.max(ceilingArg, recorded or 0)
local reconcile = detect == '2' and (recorded == nil or recorded == ceilingArg)
local register, hasLegacy = registerOf(e[5])

local cause = false
local untilMs = 0
if not e[1] then
  if detect ~= '0' and ARGV[4] == '1' then
    cause = 'data-loss'
    untilMs = now + ceiling
  end
elseif reconcile and e[3] ~= runId then
  cause = 'restart'
  untilMs = (synced and now or serverStart) + ceiling
elseif reconcile and e[7] and e[7] ~= replid and (synced or isReplica) then
  -- (A master that takes its first replica also gets a new replication id, but keeps its data:
  -- only a node that synced from another, or is a replica now, had its dataset replaced.)
  cause = 'replaced'
  untilMs = now + ceiling
elseif reconcile and (tostring(evicted) ~= (e[6] or tostring(evicted)) or processed < (tonumber(e[8] or '0') or 0)) then
  cause = 'eviction'
  untilMs = now + ceiling
elseif reconcile and (forced == 'rollback' or forced == 'clock-jump') then
  cause = forced
  untilMs = now + ceiling
elseif reconcile and e[9] and fmt(replacing) ~= e[9] then
  cause = 'rollback'
  untilMs = now + ceiling
end

local started = 0
if cause then
  -- The register may be as old as the data: raise it to the floor whatever the quarantine.
  register = math.max(register, now * 1000)
  local quarantineUntil = math.max(untilMs, now)
  if e[1] then quarantineUntil = math.max(quarantineUntil, tonumber(e[2] or '0') or 0) end
  if quarantineUntil > now then started = 1 end
  redis.call('HSET', epoch, 'createdAt', fmt(now), 'quarantineUntil', fmt(quarantineUntil), 'origin', 'quarantine', 'cause', cause,
    'maxTtlMs', fmt(ceiling))
  if cause ~= 'eviction' and cause ~= 'clock-jump' then redis.call('HSET', epoch, 'reseed', '1') end
end

if cause or reconcile and e[1] then
  if hasLegacy then redis.call('SET', KEYS[2], fmt(register)) end
  if register > 0 then redis.call('HSET', epoch, 'fence', fmt(register)) end
  if e[3] ~= runId then
    redis.call('HSET', epoch, 'runId', runId, 'serverStartedAt', fmt(serverStart))
    if e[3] then redis.call('HSET', epoch, 'prevRunId', e[3]) end
  end
  if e[7] ~= replid then redis.call('HSET', epoch, 'replid', replid) end
  if tostring(evicted) ~= (e[6] or '') then redis.call('HSET', epoch, 'evicted', tostring(evicted)) end
  -- The count at this check (one HSET per check: checks run about once per nodeCheckIntervalMs per
  -- client), so that a RESETSTAT, which brings it to ~0, reads as a fall at the next check unless
  -- the node processes more commands before it than it had processed in its life at this one.
  redis.call('HSET', epoch, 'processed', fmt(processed))
  if e[9] ~= fmt(replacing) then redis.call('HSET', epoch, 'replacing', fmt(replacing)) end
  -- Created once, never written again (a WATCH of it fires on any write).
  if redis.call('EXISTS', KEYS[3]) == 0 then redis.call('SET', KEYS[3], '1') end
end

local r = redis.call('HMGET', epoch, unpack(FIELDS))
if register > 0 then r[5] = fmt(register) end
r[6] = runId
r[7] = policy
r[8] = started
r[9] = cause or ''
r[10] = t[1]
r[11] = t[2]
r[12] = redis.call('EXISTS', KEYS[3])
r[13] = redis.call('HGET', epoch, 'reseed') or ''
return r
