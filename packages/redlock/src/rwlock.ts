/**
 * The read-write lock: many readers or one writer, never both. Its `maxReaders` reader slots are
 * slot mutexes, as a semaphore's permits are (semaphore.ts): a reader is the grant of one free
 * slot, a writer the grant of every slot at once, both through the mutex's own acquire
 * (docs/rwlocks.md has the design, the alternatives and the fairness rule).
 *
 * Safety, in one place:
 * - Never a writer with a reader, nor two writers, within their validity. Slot i of the lock r is
 *   the lock key `<prefix>rw:<r>:<i>` (keys.ts: a namespace no mutex, semaphore slot or other
 *   read-write lock shares), and every read or write lock is a grant of slot keys by attemptAcquire,
 *   the mutex's acquire, unchanged: at most one holder per slot key within its validity
 *   (protocol.ts). A writer's grant is one multi-resource grant of slots 0 … maxReaders − 1 (all or
 *   nothing), so it shares a key with every reader's grant (which is one of those slots) and with
 *   every other writer's: neither can hold within the writer's validity. Readers hold distinct
 *   slots, so at most maxReaders of them at once, and nothing else limits them.
 * - Every mechanism of the mutex applies unchanged, because nothing else decides a grant: the
 *   probe and its restart, rollback, eviction and clock checks, the quarantine, the maxTtl
 *   agreement, the cleanup of a failed attempt on every node, bounded retries. What this file adds
 *   chooses what an attempt asks for (a reader's slot, after a read: rwlock-read.ts), when a reader
 *   does not ask (a writer's intent), and when to try again (acquire-loop.ts): a wrong choice is a
 *   refused attempt or a reader let in ahead of a writer, never two holders of a slot.
 * - Fences. A grant takes its fence from the fence round of the mutex (fence-round.ts): strictly
 *   increasing across the grants of each lock key. Every writer's grant holds slot 0, so writers'
 *   fences are strictly increasing in grant order, across the quorum, whatever their other slots:
 *   the fence of a grant of several keys is one number, above the registers of a quorum that
 *   confirmed it on all of them (the "max of its slots' fences"). More: every reader's grant shares
 *   its slot with every writer's, so a reader granted after a writer carries a higher fence than
 *   it, and one granted before, a lower: a fenced store can order each reader against each writer.
 *   Readers among themselves are unordered (two readers hold different slots at once).
 * - The writer's intent (`<prefix>rw:<r>:intent`) is itself a mutex grant (fenced: false) with the
 *   writer's ttl: it needs a quorum to be taken, is never set without one, and expires if its
 *   writer dies. It bears on fairness only: a reader that reads it on a quorum does not ask, and
 *   one that read before it landed may still be granted; the writer then waits for it as for any
 *   reader that held when it declared. Readers that hold when a writer waits keep their slots:
 *   they extend and release as ever, and the writer is granted once they are all gone.
 * - The same `maxReaders` everywhere is an assumption, like the semaphore's limit (README,
 *   Assumptions): a writer of a smaller maxReaders does not take the slots a reader of a larger
 *   one may hold. Each holder and intent records it (metadata `limit`), and a reader's read, or a
 *   writer's refused attempt, reports another one (SemaphoreLimitMismatchError); the core does not
 *   prevent two clients that never see each other's keys from disagreeing once.
 *
 * Fairness: writers first. A writer whose attempt found the lock held leaves its intent; from
 * then on new readers wait (they wake on the intent's release or on a slot's). Writers compete
 * among themselves as waiters of one mutex do. The writer's wait is bounded by the holds of the
 * readers that held (or had read) when its intent landed; readers can wait behind a stream of
 * writers (writer preference's known cost).
 */
import type { AcquireHost, AttemptSource, RetryOptions } from './acquire-loop';
import { acquireLoop, retryPlan } from './acquire-loop';
import { InvalidArgumentError, LockContendedError, SemaphoreLimitMismatchError, type RedlockError } from './errors';
import { extendKeys } from './extend-round';
import { rwIntentKey, rwIntentName, rwSlotKey, rwSlotName } from './keys';
import type { Lock, LockController, LockState } from './lock';
import { attemptAcquire, type AcquireRequest, type AttemptOutcome, type ProtocolContext } from './protocol';
import { releaseKeys } from './release-round';
import { prepareAcquire } from './request';
import { readForReader } from './rwlock-read';
import { RwLock, type RwMode } from './rwlock-handle';
import { LIMIT_FIELD, pickPreferring, range } from './semaphore-slots';
import { describe } from './settings';
import type { SlotClaims } from './slot-claims';
import { runUsing } from './using';
import { checkResources } from './validate';
import { LIMITS } from './vocabulary';

/** Reader slots of a read-write lock unless its clients say otherwise. */
export const DEFAULT_MAX_READERS = 16;
/** The metadata field a holder or intent records its mode in (`read`, `write`, `intent`). */
export const MODE_FIELD = 'rw';

/** Options of one acquireRead() / acquireWrite() (and their using forms). */
export interface RwLockOptions extends RetryOptions {
  /** Reader slots of the lock: at most this many readers at once (1 … 64). Every client of a lock must use the same. @default 16 */
  maxReaders?: number;
  /** Issue a fencing token (strictly increasing across writers; see rwlock.ts for readers). @default true */
  fenced?: boolean;
  /** Holder metadata, as for acquire(); `limit` and `rw` are written by the core. */
  metadata?: Record<string, string>;
}

/** The routine of usingRead() / usingWrite(): runs while the lock is held (and extended). */
export type RwRoutine<T> = (signal: AbortSignal, lock: RwLock) => Promise<T>;

/** What a read-write lock needs of the Redlock that serves it. */
export interface RwHost {
  readonly ctx: ProtocolContext;
  readonly host: AcquireHost;
  readonly controller: LockController;
  /** The reader slots this Redlock asks for or holds (its own readers prefer others). */
  readonly claims: SlotClaims;
  lockLost(lock: Lock, reason: Error): void;
}

/** A read or write acquire, validated. */
interface RwRequest {
  readonly resource: string;
  readonly mode: RwMode;
  readonly maxReaders: number;
  readonly base: AcquireRequest;
  /** Slots 0 … maxReaders (one more than there are: a reader's read looks at it, rwlock-read.ts). */
  readonly keys: readonly string[];
  readonly names: readonly string[];
  readonly intentKey: string;
  readonly intentName: string;
}

/** Validate a read or write acquire (InvalidArgumentError before any traffic). */
export function prepareRw(ctx: ProtocolContext, mode: RwMode, resource: unknown, ttlMs: unknown, options: unknown): RwRequest {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', `must be an object, got ${describe(options)}`);
  if (typeof resource !== 'string') throw new InvalidArgumentError('resource', `must be a string, got ${describe(resource)}`);
  try {
    checkResources(resource);
  } catch (err) {
    if (err instanceof InvalidArgumentError) throw new InvalidArgumentError('resource', err.message.slice(err.argument.length + 2));
    throw err;
  }
  const opts = options as RwLockOptions;
  const maxReaders = opts.maxReaders ?? DEFAULT_MAX_READERS;
  const most = LIMITS.maxResources;
  if (typeof maxReaders !== 'number' || !Number.isInteger(maxReaders) || maxReaders < 1 || maxReaders > most)
    throw new InvalidArgumentError('maxReaders', `must be a whole number from 1 to ${most}, got ${describe(maxReaders)}`);
  const metadata: unknown = opts.metadata;
  for (const field of [LIMIT_FIELD, MODE_FIELD])
    if (typeof metadata === 'object' && metadata !== null && Object.hasOwn(metadata, field))
      throw new InvalidArgumentError(`metadata.${field}`, 'is written by the lock core for a read-write lock and cannot be set');
  // The name, the ttl, `fenced` and the metadata are checked as acquire() checks them.
  const base = prepareAcquire(ctx.settings, resource, ttlMs, { fenced: opts.fenced, metadata: opts.metadata });
  const prefix = ctx.settings.keyPrefix;
  const slots = range(maxReaders + 1);
  return {
    resource,
    mode,
    maxReaders,
    base: { ...base, metaHead: `${base.metaHead},"${LIMIT_FIELD}":"${maxReaders}","${MODE_FIELD}":"${mode}"` },
    keys: slots.map((i) => rwSlotKey(prefix, resource, i)),
    names: slots.map((i) => rwSlotName(resource, i)),
    intentKey: rwIntentKey(prefix, resource),
    intentName: rwIntentName(resource),
  };
}

/** A reader's attempts: each reads the intent and the slots (rwlock-read.ts), then asks for one free slot. */
class ReadAttempts implements AttemptSource<RwLock> {
  resources: readonly string[];
  readonly wakeOn: readonly string[];
  readonly wakeEach = true;
  private asked: { req: AcquireRequest; slots: readonly number[] } | null = null;

  constructor(
    private readonly h: RwHost,
    private readonly rw: RwRequest,
  ) {
    // A slot's release (a reader left, or the writer) and the intent's (the writer was granted or gave up).
    this.wakeOn = [...rw.names.slice(0, rw.maxReaders), rw.intentName];
    this.resources = rw.names.slice(0, rw.maxReaders);
  }

  async attempt(): Promise<AttemptOutcome> {
    const { rw, h } = this;
    const choice = await readForReader(h.ctx, rw);
    if (!choice.ok) {
      this.resources = rw.names.slice(0, rw.maxReaders);
      return { ok: false, error: choice.error, split: false, unanswered: null };
    }
    // A slot this Redlock is not already asking for or holding first (slot-claims.ts); frozen, as a lock's resources are.
    const claim = rw.resource;
    const slots = Object.freeze(pickPreferring(choice.free, h.claims.busy(claim), 1));
    const req: AcquireRequest = {
      ...rw.base,
      resources: Object.freeze(slots.map((i) => rw.names[i]!)),
      lockKeys: slots.map((i) => rw.keys[i]!),
    };
    this.asked = { req, slots };
    this.resources = req.resources;
    h.claims.claim(claim, slots);
    let outcome: AttemptOutcome;
    try {
      outcome = await attemptAcquire(h.ctx, req);
    } catch (err) {
      h.claims.settle(claim, slots, null);
      throw err;
    }
    if (outcome.ok) return outcome; // grant() settles the claim
    h.claims.settle(claim, slots, null);
    return withMismatch(outcome, rw);
  }

  grant(outcome: Extract<AttemptOutcome, { ok: true }>, state: LockState): RwLock {
    const { req, slots } = this.asked!;
    const lock = newRwLock(this.h, this.rw, req, outcome, state, slots);
    // Dropped from the claims once released or past validity (its validityMs is 0 then).
    this.h.claims.settle(this.rw.resource, slots, lock);
    return lock;
  }
}

/**
 * A writer's attempts: each asks for every slot at once. When an attempt finds the lock held, the
 * writer takes its intent before it sleeps (and renews it, once half of it is gone, before its
 * next attempt), so that new readers wait.
 */
class WriteAttempts implements AttemptSource<RwLock> {
  readonly resources: readonly string[];
  readonly wakeOn: readonly string[];
  readonly wakeEach = true;
  private readonly req: AcquireRequest;
  private readonly intentReq: AcquireRequest;
  private readonly slots: readonly number[];
  /** The intent this writer holds: its token and validity (monotonic ms). */
  private intent: { token: string; validUntil: number } | null = null;

  constructor(
    private readonly h: RwHost,
    private readonly rw: RwRequest,
  ) {
    this.slots = Object.freeze(range(rw.maxReaders));
    this.resources = Object.freeze(rw.names.slice(0, rw.maxReaders));
    this.wakeOn = this.resources;
    this.req = { ...rw.base, resources: this.resources, lockKeys: rw.keys.slice(0, rw.maxReaders) };
    // The intent is not fenced: it orders nothing, and one round is enough to take it.
    const metaHead = rw.base.metaHead.replace(/"write"$/, '"intent"');
    this.intentReq = { ...rw.base, metaHead, fenced: false, resources: Object.freeze([rw.intentName]), lockKeys: [rw.intentKey] };
  }

  async attempt(): Promise<AttemptOutcome> {
    // Renewed before the attempt, so that it outlasts the wait to come.
    if (this.intent) await this.declare();
    const outcome = await attemptAcquire(this.h.ctx, this.req);
    if (outcome.ok) return outcome;
    // Declared at once, not at the next attempt: the intent stands while the writer sleeps.
    if (outcome.error.name === 'LockContendedError') await this.declare();
    return withMismatch(outcome, this.rw);
  }

  grant(outcome: Extract<AttemptOutcome, { ok: true }>, state: LockState): RwLock {
    return newRwLock(this.h, this.rw, this.req, outcome, state, this.slots);
  }

  /**
   * Take the intent, or renew it once half of its ttl is gone. Refused (another writer's intent is
   * there, a quorum did not answer): the writer waits and asks for the slots all the same, and
   * tries again after its next refused attempt. The intent's outcome never decides the writer's grant.
   */
  private async declare(): Promise<void> {
    const { ctx } = this.h;
    const { ttlMs, resources, lockKeys } = this.intentReq;
    if (this.intent && this.intent.validUntil - performance.now() > ttlMs / 2) return;
    if (this.intent) {
      const renewed = await extendKeys(ctx, resources, lockKeys, this.intent.token, ttlMs, this.intent.validUntil);
      if (renewed.ok) {
        this.intent.validUntil = renewed.validUntil;
        return;
      }
      this.intent = null;
    }
    const taken = await attemptAcquire(ctx, this.intentReq);
    if (taken.ok) this.intent = { token: taken.token, validUntil: taken.validUntil };
  }

  /** Release the intent, if held (granted, given up, aborted): readers may go on. */
  async withdraw(): Promise<void> {
    const intent = this.intent;
    this.intent = null;
    if (intent && !this.h.host.isClosed()) await releaseKeys(this.h.ctx, this.intentReq.resources, this.intentReq.lockKeys, intent.token);
  }
}

function newRwLock(
  h: RwHost,
  rw: RwRequest,
  req: AcquireRequest,
  outcome: Extract<AttemptOutcome, { ok: true }>,
  state: LockState,
  slots: readonly number[],
): RwLock {
  const { resource, mode, maxReaders } = rw;
  return new RwLock(h.controller, req.resources, outcome.token, outcome.fence, outcome.votes, req.lockKeys, state, {
    resource,
    mode,
    maxReaders,
    slots,
  });
}

/** A refused attempt whose holder recorded another maxReaders: that mismatch instead (not retried). */
function withMismatch(outcome: Extract<AttemptOutcome, { ok: false }>, rw: RwRequest): AttemptOutcome {
  const error: RedlockError = outcome.error;
  if (!(error instanceof LockContendedError)) return outcome;
  const recorded = error.holder?.[LIMIT_FIELD];
  if (recorded === undefined || recorded === String(rw.maxReaders)) return outcome;
  const mismatch = new SemaphoreLimitMismatchError(
    `acquire ${rw.mode} ${JSON.stringify(rw.resource)}: a holder was granted with maxReaders ${recorded}, this client uses ` +
      `${rw.maxReaders}: every client of a read-write lock must use the same maxReaders`,
    error.votes,
    error.resources,
    Number(recorded),
    rw.maxReaders,
  );
  return { ...outcome, error: mismatch };
}

/**
 * acquireRead() / acquireWrite(): the mutex's retry loop over a reader's or a writer's attempts. A
 * writer's intent is released however the acquire ends (granted, refused, aborted).
 */
export async function acquireRw(h: RwHost, mode: RwMode, resource: string, ttlMs: number, options: RwLockOptions): Promise<RwLock> {
  const started = performance.now();
  const rw = prepareRw(h.ctx, mode, resource, ttlMs, options);
  const plan = retryPlan(h.ctx.settings, options, started);
  if (h.host.isClosed()) throw h.host.closedError([resource]);
  if (mode === 'read') return acquireLoop(h.host, new ReadAttempts(h, rw), plan, started);
  const writer = new WriteAttempts(h, rw);
  try {
    return await acquireLoop(h.host, writer, plan, started);
  } finally {
    await writer.withdraw();
  }
}

/** usingRead() / usingWrite(): acquire, then run `routine` as using() runs its routine (extended automatically, released at the end). */
export async function usingRw<T>(
  h: RwHost,
  mode: RwMode,
  resource: string,
  ttlMs: number,
  routine: RwRoutine<T>,
  options: RwLockOptions,
): Promise<T> {
  if (typeof routine !== 'function') throw new InvalidArgumentError('routine', 'must be a function');
  const lock = await acquireRw(h, mode, resource, ttlMs, options);
  return runUsing(
    { settings: h.ctx.settings, lockLost: (l, reason) => h.lockLost(l, reason) },
    lock,
    ttlMs,
    (signal) => routine(signal, lock),
    options.signal,
  );
}
