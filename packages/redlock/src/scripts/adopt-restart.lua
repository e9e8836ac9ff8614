-- adopt-restart.lua: a supervisor that stopped this node GRACEFULLY (SHUTDOWN, its persistence
-- flushed, exit code 0) and started it again unchanged (same data directory, same persistence)
-- states that the new process holds exactly what the old one held: the sentinel is moved to the
-- new process instead of the restart quarantine (probe.lua). Never for a crash: a SIGKILLed node
-- may have lost its last writes, and only the quarantine covers that.
--
-- Applies only to the incarnation the supervisor stopped (a compare-and-set on its run_id): the
-- sentinel must still speak for it, or a client's check must already have quarantined exactly
-- this restart (runId = this process, prevRunId = the stopped one, cause 'restart'); then the
-- quarantine the stopped process had (ARGV[3]) is put back. Anything else (no sentinel, another
-- process in between) is left to the quarantine.
--
-- KEYS[1]              <prefix>epoch
-- ARGV[1]              run_id of the process the supervisor stopped gracefully
-- ARGV[2]              origin to record (who adopted it, why)
-- ARGV[3]              quarantineUntil of that process's sentinel when it stopped (0: none)
--
-- Reply: {1, runIdNow} adopted | {0, reason}  reason: 'no-sentinel' | 'changed'
--@include _replacing.lua
local epoch = KEYS[1]
local e = redis.call('HMGET', epoch, 'createdAt', 'runId', 'prevRunId', 'cause', 'quarantineUntil')
if not e[1] then return {0, 'no-sentinel'} end
local server = redis.call('INFO', 'server')
local runId = string.match(server, 'run_id:(%x+)')
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local uptime = tonumber(string.match(server, 'uptime_in_seconds:(%d+)')) or 0
local stats = redis.call('INFO', 'stats')
local evicted = string.match(stats, 'evicted_keys:(%d+)') or '0'
-- The new process counts commands from zero: its own low-water mark (see probe.lua).
local processed = string.match(stats, 'total_commands_processed:(%d+)') or '0'
local replid = string.match(redis.call('INFO', 'replication'), 'master_replid:(%x+)') or ''
if e[2] == ARGV[1] then
  redis.call('HSET', epoch, 'runId', runId, 'prevRunId', ARGV[1], 'origin', ARGV[2],
    'serverStartedAt', string.format('%.0f', math.min(now, now - (uptime - 1) * 1000)), 'evicted', evicted, 'replid', replid, 'processed', processed)
  -- The new process counts its data-replacing commands (_replacing.lua) from zero: record its count.
  redis.call('HSET', epoch, 'replacing', string.format('%.0f', replacingCalls()))
  return {1, runId}
end
if e[2] == runId and e[3] == ARGV[1] and e[4] == 'restart' then
  -- A client found the restart first and quarantined it; the supervisor knows it lost nothing.
  -- createdAt moves on so that the quarantine reads as a new state (see grant-verdict.ts).
  local untilMs = math.max(tonumber(ARGV[3]) or 0, 0)
  redis.call('HSET', epoch, 'createdAt', string.format('%.0f', now),
    'quarantineUntil', string.format('%.0f', math.max(untilMs, now)), 'origin', ARGV[2], 'cause', '', 'processed', processed)
  -- A graceful restart kept the register: no reseed from the other nodes is owed (probe.lua).
  redis.call('HSET', epoch, 'replacing', string.format('%.0f', replacingCalls()))
  redis.call('HDEL', epoch, 'reseed')
  return {1, runId}
end
return {0, 'changed'}
