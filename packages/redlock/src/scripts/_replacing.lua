-- _replacing.lua (included by probe.lua, mark-clean.lua and adopt-restart.lua; scripts/gen-lua.mjs
-- inlines it): the commands that replace or rewrite a node's data wholesale, and their calls in
-- this process from INFO commandstats (a command never called has no line). A check records the
-- count in the sentinel (`replacing`); a count that moved since is a rollback (probe.lua). FLUSHDB
-- is not among them: it may be another database's, and a FLUSHDB of ours takes the sentinel with it
-- (data-loss).
local REPLACING = {'debug', 'swapdb', 'restore', 'restore-asking', 'flushall', 'replicaof', 'slaveof', 'failover'}
local function replacingCalls()
  local stats = redis.call('INFO', 'commandstats')
  local n = 0
  for _, name in ipairs(REPLACING) do
    n = n + (tonumber(string.match(stats, 'cmdstat_' .. name:gsub('%-', '%%-') .. ':calls=(%d+)')) or 0)
  end
  return n
end
