/**
 * The lock core: Redlock over N independent Redis masters, with fencing tokens, data-loss
 * quarantine, holder metadata, automatic extension and waiter wake-up. Framework-free.
 */
export { Redlock, type AcquireOptions } from './redlock';
export type { MarkCleanOptions, MarkCleanResult } from './mark-clean-outcome';
export { Lock, type ReleaseResult, type ExtendResult } from './lock';
/** The fenced semaphore: a permit is the grant of free slots, each a mutex (semaphore.ts). */
export { Permit } from './permit';
export type { SemaphoreOptions } from './semaphore';
/** The read-write lock: a reader holds one of its reader slots, a writer all of them (rwlock.ts). */
export { RwLock, type RwMode } from './rwlock-handle';
export { DEFAULT_MAX_READERS, type RwLockOptions, type RwRoutine } from './rwlock';
export { DEFAULT_SETTINGS, resolveSettings, type RedlockSettings } from './settings';
export {
  RedlockError,
  LockContendedError,
  QuorumUnavailableError,
  LockExpiredError,
  InvalidArgumentError,
  MaxTtlMismatchError,
  SemaphoreLimitMismatchError,
  isRedlockError,
} from './errors';
export type { RedlockErrorName, SemaphoreErrorName } from './errors';
export type { Vote, VoteReason } from './votes';
export type { RedlockEvents, NodeErrorEvent, QuarantineEvent, LockLostEvent, OperationEvent } from './events';
export { quorumSize, blockingSize, driftMs, validityMs, validityHorizonMs, jitteredDelayMs } from './quorum';
export { LIMITS, RESERVED_METADATA, VOTE_REASONS } from './vocabulary';
export { NodeBacklogError, NodeStalledError } from './node';
export { nodeLabel } from './node-label';
/** The client seam: what the core needs of a client passed in, and the adapters (detected by shape, or explicit). */
export type { RedlockClient, RedlockClientCommand, RedlockSubscription, SubscriptionHandlers } from './client';
export { isRedlockClient } from './client';
export { ioredisClient } from './client-ioredis';
export { nodeRedisClient, type NodeRedisClientLike } from './client-node-redis';
export type { RedlockNodeTarget } from './client-detect';
export { parseNodeUrl, type NodeAddress } from './node-url';
/** The key layout: every key and channel the core uses on a node. */
export {
  epochKey,
  escapeGlob,
  legacyFenceKey,
  lockKey,
  lockKeyPrefix,
  lockKeysOf,
  lockPattern,
  releaseChannel,
  resourceOf,
  rwIntentKey,
  rwIntentName,
  rwKeyOf,
  rwKeyPrefix,
  rwPattern,
  rwSlotKey,
  rwSlotName,
  semaphoreKeyPrefix,
  semaphorePattern,
  semaphoreSlotKey,
  semaphoreSlotName,
  semaphoreSlotOf,
} from './keys';
/** A lock key's value is `<token> <metadata JSON>`: read it with these. */
export { lockValue, metaTextOf, parseMetaText, tokenOf } from './value';
export {
  adoptGracefulRestart,
  EPOCH_FIELDS,
  markNodeClean,
  nodeTimeMs,
  parseEpoch,
  QUARANTINE_CAUSES,
  readEpoch,
  readFenceRegister,
  SentinelChangedError,
  serverRunId,
  type EpochSentinel,
  type QuarantineCause,
  type SeenSentinel,
} from './epoch';
