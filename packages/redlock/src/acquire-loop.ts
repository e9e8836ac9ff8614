import { InvalidArgumentError, setCleanupPending, type RedlockError } from './errors';
import type { Lock, LockState, ReleaseResult } from './lock';
import type { AttemptOutcome } from './protocol';
import { jitteredDelayMs } from './quorum';
import { checkDelay, checkRetryCount, type RedlockSettings } from './settings';
import type { ReleaseWaiters, Waiter } from './waiters';
import type { Vote } from './votes';

/** Short naps after split votes in a row (no release seen since), before the normal jittered delays. */
const MAX_SPLIT_NAPS = 3;

/** Failures that are configuration errors: not worth a retry. */
const NOT_RETRIED: ReadonlySet<string> = new Set(['MaxTtlMismatchError', 'SemaphoreLimitMismatchError']);

/** The retry options of one acquire, validated. */
export interface RetryPlan {
  readonly retryCount: number;
  readonly retryDelayMs: number;
  readonly retryJitterMs: number;
  /** performance.now() after which no sleep starts (Infinity: no bound). */
  readonly deadline: number;
  readonly signal: AbortSignal | undefined;
}

/** What the retry options of an acquire may carry (AcquireOptions). */
export interface RetryOptions {
  retryCount?: number;
  retryDelayMs?: number;
  retryJitterMs?: number;
  maxWaitMs?: number;
  signal?: AbortSignal;
}

/**
 * Validate the retry options (InvalidArgumentError before any traffic); a signal already aborted
 * throws its reason. `started`: performance.now() when the acquire began.
 */
export function retryPlan(settings: Readonly<RedlockSettings>, options: RetryOptions, started: number): RetryPlan {
  const retryCount = options.retryCount === undefined ? settings.retryCount : checkRetryCount('retryCount', options.retryCount);
  const retryDelayMs = options.retryDelayMs === undefined ? settings.retryDelayMs : checkDelay('retryDelayMs', options.retryDelayMs);
  const retryJitterMs = options.retryJitterMs === undefined ? settings.retryJitterMs : checkDelay('retryJitterMs', options.retryJitterMs);
  // Only when to stop retrying: an attempt is decided as ever, so this changes neither mutual
  // exclusion nor fence order (a grant is still a quorum's, its validity still measured).
  const deadline = options.maxWaitMs === undefined ? Infinity : started + checkDelay('maxWaitMs', options.maxWaitMs);
  const signal = options.signal;
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new InvalidArgumentError('signal', 'must be an AbortSignal');
  if (signal?.aborted) throw signal.reason;
  return { retryCount, retryDelayMs, retryJitterMs, deadline, signal };
}

/** What the loop needs of the Redlock that runs it. */
export interface AcquireHost {
  readonly waiters: ReleaseWaiters;
  isClosed(): boolean;
  closedError(resources: readonly string[]): RedlockError;
  /** Record a granted lock's mutable state (extend and release find it there). */
  track(lock: Lock, state: LockState): void;
  releaseLock(lock: Lock): Promise<ReleaseResult>;
  /** Emit 'acquire' (when someone listens). */
  emitAcquire(
    resources: readonly string[],
    ok: boolean,
    started: number,
    votes: readonly Vote[],
    fence: number | null,
    attempts: number,
    error?: RedlockError,
  ): void;
}

/** The attempts of one acquire: a mutex's (the same request each time) or a semaphore's (slots chosen per attempt). */
export interface AttemptSource<L extends Lock> {
  /** The names the acquire reports (events, errors). */
  readonly resources: readonly string[];
  /** The names whose release on the channel wakes this acquire while it waits. */
  readonly wakeOn: readonly string[];
  /** Each wakeOn name's release is a place of its own (a semaphore's slots), not one lock's copies: waiters.ts. */
  readonly wakeEach?: boolean;
  attempt(): Promise<AttemptOutcome>;
  /** The handle of the grant the last attempt won. */
  grant(outcome: Extract<AttemptOutcome, { ok: true }>, state: LockState): L;
}

/**
 * Attempts until one is granted or the retries, `maxWaitMs` or the signal end the wait; between
 * attempts, sleeps that a release of a `wakeOn` name cuts short (waiters.ts). Only when to try
 * again is decided here: each attempt is decided by its quorum alone (protocol.ts), so nothing
 * in this loop bears on mutual exclusion or fence order.
 */
export async function acquireLoop<L extends Lock>(
  host: AcquireHost,
  source: AttemptSource<L>,
  plan: RetryPlan,
  started: number,
): Promise<L> {
  const { retryCount, retryDelayMs, retryJitterMs, deadline, signal } = plan;
  let attempts = 0;
  let retriesLeft = retryCount;
  let sleepLeft = 0;
  let waiter: Waiter | null = null;
  let lastError: RedlockError | null = null;
  let splitNaps = 0;
  // Nodes where a failed attempt's keys may remain (RedlockError.cleanupPending).
  let unanswered: boolean[] | null = null;
  try {
    for (;;) {
      const seen = host.waiters.seq;
      const attemptStart = performance.now();
      const outcome = await source.attempt();
      attempts++;
      if (outcome.ok) {
        const state: LockState = { validUntil: outcome.validUntil, expiresAt: outcome.expiresAt, extensions: 0, released: false };
        const lock = source.grant(outcome, state);
        host.track(lock, state);
        if (signal?.aborted) {
          // Granted after the caller gave up: hand it back at once.
          await host.releaseLock(lock);
          throw signal.reason;
        }
        host.emitAcquire(source.resources, true, started, outcome.votes, outcome.fence, attempts);
        return lock;
      }
      lastError = outcome.error;
      if (outcome.unanswered) {
        unanswered ??= new Array<boolean>(outcome.unanswered.length).fill(false);
        for (let i = 0; i < unanswered.length; i++) if (outcome.unanswered[i]) unanswered[i] = true;
      }
      if (signal?.aborted) throw signal.reason;
      // A configuration error (this client's maxTtlMs is not the cluster's) is not worth a retry.
      if (retryCount === 0 || host.isClosed() || NOT_RETRIED.has(lastError.name)) break;
      if (performance.now() >= deadline) break;
      waiter ??= host.waiters.register(source.wakeOn, seen, source.wakeEach);
      // A release was published while the attempt was under way: retry at once (free of charge).
      if (waiter.takeAgain()) {
        if (waiter.takeReleased()) splitNaps = 0;
        continue;
      }
      if (sleepLeft <= 0) {
        if (retriesLeft === 0) break;
        retriesLeft--;
        sleepLeft = jitteredDelayMs(retryDelayMs, retryJitterMs);
      }
      // A split vote (the refusing nodes are held by different tokens: waiters that collided,
      // with nobody holding a quorum) will not be ended by a release: back off briefly at random,
      // about one attempt long, instead of sleeping out the whole delay.
      // At most MAX_SPLIT_NAPS of them in a row without a release in between: a split that
      // persists is not waiters colliding but keys that are not going away (another library's
      // lock, a crashed client's leftovers), and napping through the whole retry window would
      // be a storm of attempts.
      const sleepStart = performance.now();
      const napping = outcome.split && splitNaps < MAX_SPLIT_NAPS;
      if (napping) splitNaps++;
      const wanted = napping ? Math.min(sleepLeft, 1 + Math.random() * Math.min(50, 2 * (sleepStart - attemptStart))) : sleepLeft;
      const nap = Math.max(0, Math.min(wanted, deadline - sleepStart));
      const woken = await waiter.sleep(nap, signal);
      // A release woke us (not a subscription's catch-up): the keys in the way do go away, and
      // colliding again with the other waiters it woke deserves short naps again.
      if (waiter.takeReleased()) splitNaps = 0;
      // quit() wakes every sleeper: settle at once.
      if (host.isClosed()) {
        lastError = host.closedError(source.resources);
        break;
      }
      // Woken early or napping: keep the rest of the delay for later, so the total wait stays
      // bounded by the retry budget however many releases wake us. (A timer may fire a little
      // before `nap` has passed on the monotonic clock: a full sleep uses up the delay.)
      sleepLeft = !woken && nap === sleepLeft ? 0 : sleepLeft - (performance.now() - sleepStart);
    }
  } finally {
    waiter?.unregister();
  }
  if (unanswered) setCleanupPending(lastError, unanswered);
  host.emitAcquire(source.resources, false, started, lastError.votes, null, attempts, lastError);
  throw lastError;
}
