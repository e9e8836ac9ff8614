/**
 * Cross-node inspection: scan every master for lock keys, group them into per-resource quorum
 * views, page through them, read one resource directly, and audit each node's health and safety.
 * Framework-free; the console's services (lib/server) call these with their Redis clients.
 */

/** Bounded waits on one node: connection readiness and per-call timeouts. */
export { ensureReady, errorMessage, withTimeout } from './connection';
/** The lock list's page cursor was not made here (or was altered). */
export { InvalidCursorError } from './errors';
/** Scanning one node in bounded Lua batches (SCAN + MGET + PTTL per round trip, values split into token and metadata). */
export {
  escapeGlob,
  lockKeyPrefix,
  lockPattern,
  resourceOfKey,
  scanNode,
  SCAN_DEFAULTS,
  type NodeScan,
  type NonStringKey,
  type ScanOptions,
} from './scan';
/** The scanner's Lua source and SHA (EVALSHA with an EVAL fallback). */
export { runScanBatch, SCAN_BATCH_SCRIPT, SCAN_BATCH_SHA } from './scan-script';
/** Holder metadata: the JSON after the token in a lock key's value (`<token> <metadata JSON>`). */
export { parseMeta, splitLockValue } from './meta';
/** Running a Lua script by SHA with an EVAL fallback. */
export { luaScript, readLua, runLua, type LuaScript } from './script';
/** Pure classification of one key across the nodes: held / expiring / partial / split. */
export {
  compareLocks,
  DEFAULT_DRIFT_FACTOR,
  DEFAULT_EXPIRING_THRESHOLD_MS,
  driftAllowanceMs,
  LOCK_STATES,
  quorumSize,
  quorumView,
  type LockCell,
  type LockState,
  type QuorumOptions,
  type QuorumView,
  type ScannedLock,
} from './quorum-view';
/** Is a token's holder alive: its extensions and pace, read from its keys' metadata and TTLs (pure). */
export { holderLiveness, type HolderLiveness, type HolderPulse } from './holder-liveness';
/** Grouping per-node scans by key (columnar, fed key by key) into quorum views. */
export { LockGrouper, type LockSink, type NodeReading } from './grouping';
/** A full snapshot of every node's lock keys, grouped into quorum views (awaited, or watched as it runs). */
export { snapshot, startSnapshot, type Snapshot, type SnapshotNode, type SnapshotOptions, type SnapshotRun } from './snapshot';
/** Stable-cursor pages of a snapshot, filtered by resource prefix, state and search text. */
export {
  clampPageLimit,
  decodeCursor,
  encodeCursor,
  pageLocks,
  PAGE_LIMIT_DEFAULT,
  PAGE_LIMIT_MAX,
  type LockPage,
  type PageQuery,
} from './page';
/** A snapshot's locks read by position; views made on demand. */
export { arrayLockList, type LockList } from './view-list';
/** A first page while the scan still runs: the first locks found so far, each read directly on every node. */
export { earlyPage, earlyPageDue, EARLY_READ_TIMEOUT_MS, type EarlyPage, type EarlyPageOptions, type EarlyPageTimings } from './early-page';
/** A few lock keys read directly on every node and classified (no scan). */
export { readLocks, type ReadLocksOptions, type ReadNode } from './read-keys';
/** One resource read directly from every node (no scan). */
export { lockDetail, type DetailNode, type DetailOptions, type LockDetail } from './detail';
/** Per-node health: reachability, RTT, clock offset, setup, quarantine. */
export {
  clusterHealth,
  HEALTH_TIMEOUT_MS,
  nodeHealth,
  parseInfo,
  type HealthOptions,
  type NodeHealth,
  type PersistenceInfo,
  type QuarantineInfo,
} from './health';
/** Safety verdicts per node and whether the cluster can grant locks. */
export {
  clusterVerdict,
  safetyVerdict,
  type ClusterVerdict,
  type HealthFacts,
  type SafetyLevel,
  type SafetyVerdict,
  type VerdictOptions,
} from './verdict';
/** A live index of the lock keys, kept by keyspace notifications: snapshots without a rescan. */
export { LockIndex, type IndexedSnapshot, type IndexedSnapshotNode, type LockIndexOptions, type RescanReason } from './lock-index';
/** Keyspace notifications the index and the live events need. */
export { ensureNotifications, hasNotifyFlags, NOTIFY_FLAGS } from './notifications';
/** Semaphores and read-write locks: their slot keys grouped per lock, judged per key as a lock is (pure). */
export {
  groupSlotLocks,
  slotKeyOf,
  summarise,
  SLOT_KINDS,
  type SlotHolder,
  type SlotKind,
  type SlotLock,
  type SlotRow,
} from './slot-locks';
/** Semaphores and read-write locks read from every master: a bounded scan of their namespace, or one lock's keys directly. */
export { readSlotLock, scanSlotLocks, slotKeysOf, type SlotReading, type SlotReadNode, type SlotReadOptions } from './slot-read';
