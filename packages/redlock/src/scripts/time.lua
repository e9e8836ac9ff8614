-- time.lua: the node's TIME, for a node behind a proxy that refuses the plain command (node.ts
-- timeRead). Sent as EVAL, never EVALSHA, just before a grant's SET (grant.ts).
--
-- KEYS[1]              <prefix>epoch: not read; it routes the call to the lock's server
-- ARGV[1 ..]           none
--
-- Reply: {seconds, microseconds}, as TIME
return redis.call('TIME')
