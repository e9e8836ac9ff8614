-- mark-clean.lua: write a clean epoch sentinel ("this node holds no lost lock") for the
-- redis-server process running now, replacing any running quarantine, and raise the fence register
-- to the hybrid-logical-clock floor now(ms) * 1000 (see probe.lua): a node marked clean after
-- losing its data lost its register too, and must not hand out a fence lower than one already issued.
--
-- A compare-and-set when the caller says what it saw (ARGV[3], ARGV[4]): an operator who looked at
-- the node, judged it and then clicked must not clean a node that restarted or lost its data again
-- in between. Nothing is written when the sentinel changed; the reply says what is there now.
--
-- KEYS[1]              <prefix>epoch
-- KEYS[2]              <prefix>fence   the register's old key: kept in step while it exists (probe.lua)
-- KEYS[3]              <prefix>anchor  created when missing: the key the lock core WATCHes (probe.lua)
-- ARGV[1]              maxTtlMs: recorded when the node has no ceiling recorded yet (a recorded
--                      ceiling is kept: lowering it would shorten the quarantine of longer locks)
-- ARGV[2]              origin (free text: 'clean', 'fresh data directory', an operator's note)
-- ARGV[3]              the runId the caller saw in the sentinel ('' = no check; '-' = no sentinel):
--                      it must still be the sentinel's AND the running process's (a node restarted
--                      from a snapshot holding the same sentinel is not the node the operator saw)
-- ARGV[4]              the createdAt the caller saw ('' = no check)
--
-- Reply: {1, createdAt, register, runId}   written (node clock ms; the register after the call)
--        {0, createdAt or '', runId or ''} not written: the sentinel is not the one the caller saw
--@include _replacing.lua
local epoch = KEYS[1]
local e = redis.call('HMGET', epoch, 'createdAt', 'runId', 'maxTtlMs', 'fence')
local server = redis.call('INFO', 'server')
local runId = string.match(server, 'run_id:(%x+)')
if ARGV[3] ~= '' then
  local seen = e[2] or (e[1] and '' or '-')
  if seen ~= ARGV[3] or (ARGV[3] ~= '-' and runId ~= ARGV[3]) or (ARGV[4] ~= '' and (e[1] or '') ~= ARGV[4]) then
    return {0, e[1] or '', e[2] or ''}
  end
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local replid = string.match(redis.call('INFO', 'replication'), 'master_replid:(%x+)') or ''
local uptime = tonumber(string.match(server, 'uptime_in_seconds:(%d+)')) or 0
local stats = redis.call('INFO', 'stats')
local evicted = string.match(stats, 'evicted_keys:(%d+)') or '0'
local processed = string.match(stats, 'total_commands_processed:(%d+)') or '0'

local register = tonumber(e[4] or '0') or 0
local legacy = redis.call('GET', KEYS[2])
if legacy then register = math.max(register, tonumber(legacy) or 0) end
local floor = now * 1000
if floor > register then register = floor end
if legacy then redis.call('SET', KEYS[2], string.format('%.0f', register)) end

redis.call('HSET', epoch,
  'createdAt', string.format('%.0f', now),
  'quarantineUntil', string.format('%.0f', now),
  'maxTtlMs', e[3] or ARGV[1],
  'origin', ARGV[2],
  'cause', '',
  'runId', runId,
  'replid', replid,
  'serverStartedAt', string.format('%.0f', math.min(now, now - (uptime - 1) * 1000)),
  'evicted', evicted,
  'processed', processed,
  'fence', string.format('%.0f', register))
-- The count of data-replacing commands as of now (_replacing.lua): what came before the mark-clean
-- does not matter, what comes after it does, also for a copy of the node taken before any check.
redis.call('HSET', epoch, 'replacing', string.format('%.0f', replacingCalls()))
if redis.call('EXISTS', KEYS[3]) == 0 then redis.call('SET', KEYS[3], '1') end
return {1, now, register, runId}
