/**
 * `@redlock-console/redlock/vocabulary`: the core's words and limits as plain data, importing
 * nothing (no ioredis, no node:*), so that code bundled for a browser (the console's lib/api
 * schemas) states them by reference instead of by copy. The core itself uses these definitions.
 */
export { blockingSize, driftMs, quorumSize, validityHorizonMs, validityMs } from './quorum';

/** Limits on what one request may carry. Checked before any Redis traffic. */
export const LIMITS = Object.freeze({
  /** Bytes (UTF-8) of one resource name. */
  maxResourceBytes: 512,
  /** Resources in one lock. */
  maxResources: 64,
  /** Caller metadata fields per lock. */
  maxMetadataFields: 16,
  /** Characters of a metadata field name. */
  maxMetadataKeyChars: 64,
  /** Characters of a metadata value. */
  maxMetadataValueChars: 256,
  /** Characters of a token given to extendToken / releaseToken. */
  maxTokenChars: 256,
  /** Permits (slots) of one semaphore: its `limit`. One acquire takes at most maxResources of them. */
  maxSemaphoreLimit: 256,
});

/** Metadata fields the lock core writes itself; a caller may not set them. */
export const RESERVED_METADATA = Object.freeze(['acquiredAt', 'extensions', 'fence', 'ttlMs']);

/**
 * Why a node sits out (see epoch.ts): its data is gone, it restarted, a replication sync replaced
 * its data, it evicted keys, its data went back in time within one process (a restore in place,
 * DEBUG RELOAD, SWAPDB, a RESTORE tool: `rollback`), or its wall clock jumped or ran faster or
 * slower than the drift allowance (`clock-jump`: its keys may have expired early).
 */
export const QUARANTINE_CAUSES = Object.freeze(['data-loss', 'restart', 'replaced', 'eviction', 'rollback', 'clock-jump'] as const);
export type QuarantineCause = (typeof QUARANTINE_CAUSES)[number];

/** Every reason a node votes as it did (votes.ts says what each means). */
export const VOTE_REASONS = Object.freeze([
  'ok',
  'contended',
  'quarantined',
  'unsafe-eviction',
  'ceiling-mismatch',
  'lost',
  'not-held',
  'timeout',
  'pending',
  'error',
  'not-asked',
] as const);
export type VoteReason = (typeof VOTE_REASONS)[number];
