/**
 * `@redlock-console/redlock/internals`: what this repository's console, benchmarks and scenario
 * engine need beyond the public face (index.ts), with NO compatibility promise: it changes with
 * the protocol. The Lua scripts (to preload them on a node a scenario restarts), how the grant of
 * one resource and the probe are built (the bench's per-script cost workload), the core's own
 * connection (the live events' keyspace subscribers: its unsolicited replies are 'push' events).
 */
export { ALL_SCRIPTS, ACQUIRE_SCRIPT, EXTEND_SCRIPT, FENCE_SCRIPT, PROBE_SCRIPT, RELEASE_SCRIPT, type LuaScript } from './scripts';
export { prepareAcquire } from './request';
export { PROBE_FIELDS, probeScript } from './grant-plan';
export { NodeConnection } from './connection';
export { encodeCommand } from './resp';
export { parseNodeUrl, type NodeAddress } from './node-url';
