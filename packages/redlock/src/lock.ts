import type { Vote } from './votes';

/**
 * Per-node outcome of a release. Releasing twice or after expiry is not an error.
 *
 * A release answers as soon as a quorum of nodes no longer holds the key (the lock is over then:
 * see release-round.ts); nodes that had not answered yet vote `pending`. `settled` resolves with
 * the final outcome, once every node answered or the node timeout passed.
 */
export interface ReleaseResult {
  readonly resources: readonly string[];
  readonly token: string;
  /** `for`/`ok`: a key holding the token was deleted there; `against`/`not-held`: nothing of ours; `pending`: not answered yet. */
  readonly votes: readonly Vote[];
  /** Nodes on which a key was deleted (so far: see `settled`). */
  readonly deleted: number;
  /** Every node answered (none timed out, failed, or is still pending). */
  readonly complete: boolean;
  readonly durationMs: number;
  /** The outcome once every node answered or timed out (this same result when it already was). Never rejects. */
  readonly settled: Promise<ReleaseResult>;
}

/** Outcome of a successful extend. */
export interface ExtendResult {
  readonly resources: readonly string[];
  readonly token: string;
  readonly votes: readonly Vote[];
  /** Validity counted from the extend's own start: ttl − elapsed − drift. */
  readonly validityMs: number;
  /** Epoch ms at which that validity ends (for display). */
  readonly expiresAt: number;
  readonly durationMs: number;
}

/** What a Lock needs from the Redlock that granted it (implemented by Redlock; no import cycle). */
export interface LockController {
  extendLock(lock: Lock, ttlMs: number): Promise<Lock>;
  releaseLock(lock: Lock): Promise<ReleaseResult>;
}

/** The mutable part of a lock, owned by the Redlock that granted it. */
export interface LockState {
  /** performance.now() at which validity ends. */
  validUntil: number;
  /** Date.now() at which validity ends. */
  expiresAt: number;
  extensions: number;
  released: boolean;
}

/**
 * The handle a caller holds. `extend()` updates this same object (and resolves with it), so a
 * reference kept elsewhere, e.g. by a `using()` routine, always shows the current validity.
 */
export class Lock {
  readonly resources: readonly string[];
  readonly token: string;
  /** Fencing token: strictly increasing in grant order for each resource; null when fenced: false. */
  readonly fence: number | null;
  /** Per-node votes of the acquire round that granted the lock (slow nodes may show `pending`). */
  readonly votes: readonly Vote[];
  /** @internal The lock keys, in resource order. */
  readonly keys: readonly string[];
  readonly #controller: LockController;
  readonly #state: LockState;

  constructor(
    controller: LockController,
    resources: readonly string[],
    token: string,
    fence: number | null,
    votes: readonly Vote[],
    keys: readonly string[],
    state: LockState,
  ) {
    this.#controller = controller;
    this.resources = resources;
    this.token = token;
    this.fence = fence;
    this.votes = votes;
    this.keys = keys;
    this.#state = state;
  }

  /** Epoch ms at which validity ends (for display; decisions use the monotonic `validityMs`). */
  get expiresAt(): number {
    return this.#state.expiresAt;
  }

  /** Remaining validity in ms on the monotonic clock; never negative, 0 once expired or released. */
  get validityMs(): number {
    if (this.#state.released) return 0;
    const left = this.#state.validUntil - performance.now();
    return left > 0 ? Math.floor(left) : 0;
  }

  /** Successful extensions so far. */
  get extensions(): number {
    return this.#state.extensions;
  }

  get released(): boolean {
    return this.#state.released;
  }

  /**
   * Extend to `ttlMs` from now on a majority, within the current validity. Rejects with
   * LockExpiredError if validity has run out (nothing is sent) or runs out meanwhile, or if the
   * keys are gone; QuorumUnavailableError if too few nodes answered (the old validity still holds).
   */
  extend(ttlMs: number): Promise<Lock> {
    return this.#controller.extendLock(this, ttlMs);
  }

  /** Compare-and-delete on every node. Never rejects on node failures: see the per-node votes. */
  release(): Promise<ReleaseResult> {
    return this.#controller.releaseLock(this);
  }

  /**
   * `await using lock = await redlock.acquire(…)` releases the lock when the block is left, however
   * it is left (Node ≥ 20.9 has Symbol.asyncDispose; TypeScript needs lib `esnext.disposable`).
   * A second release (an explicit one before) deletes nothing: the compare-and-delete finds no key.
   */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.release();
  }

  toJSON(): { resources: readonly string[]; fence: number | null; expiresAt: number; validityMs: number } {
    return { resources: this.resources, fence: this.fence, expiresAt: this.expiresAt, validityMs: this.validityMs };
  }
}
