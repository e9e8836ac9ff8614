import type { Vote } from './votes';

/**
 * Failures of the lock core. One class per failure, each with a literal `name` (stable across
 * bundlers, usable in `switch (err.name)` and by the console's error mapper), all carrying the
 * per-node votes of the round that decided the failure (empty when no node was asked).
 */
/** A brand every RedlockError carries, shared by every copy of this package (ESM, CJS, two versions). */
const BRAND = Symbol.for('@redlock-console/redlock.RedlockError');

/** The `name` of every RedlockError class: a mapping typed `Record<RedlockErrorName, …>` must name each one. */
export type RedlockErrorName =
  | 'LockContendedError'
  | 'QuorumUnavailableError'
  | 'LockExpiredError'
  | 'InvalidArgumentError'
  | 'MaxTtlMismatchError'
  | SemaphoreErrorName;

/**
 * The `name` of the semaphore's (and read-write lock's) own RedlockError class. Part of
 * RedlockErrorName since the HTTP lock service answers semaphores: every mapping typed over that
 * union (the console's error mapper, its metrics outcomes) names it.
 */
export type SemaphoreErrorName = 'SemaphoreLimitMismatchError';

export abstract class RedlockError extends Error {
  /** See isRedlockError. */
  readonly [BRAND] = true;
  abstract override readonly name: RedlockErrorName;
  /** Per-node votes of the deciding round. */
  readonly votes: readonly Vote[];
  /** The resources of the request, when known. */
  readonly resources: readonly string[];
  /**
   * For a rejected acquire: the numbers of the nodes (from 1, as in `votes`) where a grant or the cleanup of one
   * of its attempts got no answer (a timeout, an error, still pending), so a key of the attempt may
   * stay there until it expires (at most the ttl); the compare-and-delete was still sent to them.
   * Every other node holds nothing of the acquire once it has rejected. Empty otherwise.
   */
  readonly cleanupPending: readonly number[] = [];

  constructor(message: string, votes: readonly Vote[] = [], resources: readonly string[] = [], options?: ErrorOptions) {
    super(message, options);
    this.votes = votes;
    this.resources = resources;
  }
}

/** Someone else holds the lock: enough nodes answered that the holders' keys block a quorum. */
export class LockContendedError extends RedlockError {
  override readonly name = 'LockContendedError' as const;
  /**
   * The metadata of the holder that refused on the most nodes (owner, host, pid, acquiredAt…, as
   * its lock value carries it), or null when it wrote none (another library, a bare token). Never
   * its token: a token is what a release needs.
   */
  readonly holder: Readonly<Record<string, string>> | null;

  constructor(
    message: string,
    votes: readonly Vote[] = [],
    resources: readonly string[] = [],
    holder: Readonly<Record<string, string>> | null = null,
  ) {
    super(message, votes, resources);
    this.holder = holder;
  }
}

/**
 * Not enough nodes could vote: they timed out, failed, or are quarantined after losing their data
 * (a `quarantined` vote carries `quarantineUntil`). Retrying later may succeed.
 */
export class QuorumUnavailableError extends RedlockError {
  override readonly name = 'QuorumUnavailableError' as const;
  /**
   * Nodes (numbers, from 1) that voted `quarantined` because they have no epoch sentinel: brand-new
   * masters never initialised with `markNodesClean()` (the first-run case: call it once), or nodes
   * that lost their data. The message says so too. Empty otherwise.
   */
  readonly missingSentinel: readonly number[] = [];
}

/**
 * Validity ran out: an acquire reached its quorum too late (elapsed + drift ≥ ttl), or an extend
 * was asked for a lock whose validity had already run out, ran out while extending, or whose keys
 * are gone from enough nodes that it can no longer be held.
 */
export class LockExpiredError extends RedlockError {
  override readonly name = 'LockExpiredError' as const;
}

/**
 * This client's maxTtlMs is not the lease ceiling the nodes record (`ceiling-mismatch` votes). Every
 * client of a cluster must use one ceiling: a quarantine is only as long as the ceiling of the
 * client that starts it, so a client with a shorter one would end quarantines while longer locks
 * are still held, and one with a longer one would take locks that others' quarantines do not cover.
 * Not retried: it is a configuration error.
 */
export class MaxTtlMismatchError extends RedlockError {
  override readonly name = 'MaxTtlMismatchError' as const;
  /** The ceiling recorded on the nodes, and this client's. */
  readonly recordedMaxTtlMs: number;
  readonly clientMaxTtlMs: number;

  constructor(message: string, votes: readonly Vote[], resources: readonly string[], recorded: number, client: number) {
    super(message, votes, resources);
    this.recordedMaxTtlMs = recorded;
    this.clientMaxTtlMs = client;
  }
}

/**
 * A semaphore's live holder was granted its permit under another `limit` than this caller's: the
 * clients of one semaphore disagree on how many slots it has, so together they could admit more
 * holders than the smaller limit. A configuration error: not retried.
 */
export class SemaphoreLimitMismatchError extends RedlockError {
  override readonly name = 'SemaphoreLimitMismatchError' as const;
  /** The limit the holder recorded, and this caller's. */
  readonly recordedLimit: number;
  readonly clientLimit: number;

  constructor(message: string, votes: readonly Vote[], resources: readonly string[], recorded: number, client: number) {
    super(message, votes, resources);
    this.recordedLimit = recorded;
    this.clientLimit = client;
  }
}

/** A bad argument or setting, refused before any Redis traffic. */
export class InvalidArgumentError extends RedlockError {
  override readonly name = 'InvalidArgumentError' as const;
  /** The name of the offending argument or setting. */
  readonly argument: string;

  constructor(argument: string, message: string) {
    super(`${argument}: ${message}`);
    this.argument = argument;
  }
}

/**
 * Is `err` a RedlockError, from this copy of the package or another (the ESM and CommonJS builds
 * loaded side by side, two installed versions): `instanceof` sees only its own copy's classes, so
 * this checks a Symbol.for brand. Narrow further by `err.name`, which every class fixes.
 */
export function isRedlockError(err: unknown): err is RedlockError {
  return typeof err === 'object' && err !== null && (err as { [BRAND]?: unknown })[BRAND] === true;
}

/** Record on a rejected acquire's error the nodes where its keys may remain (the core's own use). */
export function setCleanupPending(error: RedlockError, unanswered: readonly boolean[]): void {
  const nodes: number[] = [];
  for (let i = 0; i < unanswered.length; i++) if (unanswered[i]) nodes.push(i + 1);
  (error as { cleanupPending: readonly number[] }).cleanupPending = nodes;
}
