/**
 * The fenced semaphore: `limit` permits of a resource are `limit` slot mutexes, and a permit is the
 * grant of free slots through the mutex's own acquire (docs/semaphores.md has the design and why
 * the usual per-node count of holders is unsafe for more than one permit).
 *
 * Safety, in one place:
 * - At most `limit` holders within their validity. Slot i of semaphore r is the lock key
 *   `<prefix>sem:<r>:<i>` (keys.ts: a namespace no mutex key and no other semaphore's slot shares),
 *   and a permit is a grant of that key by attemptAcquire, the mutex's acquire, unchanged: at most
 *   one holder per slot within its validity (protocol.ts), and a client that agrees on `limit`
 *   only ever asks for slots 0 … limit − 1, so at most `limit` holders. A permit of k slots is one
 *   multi-resource grant of k slot keys: all or nothing, as for several resources.
 * - Every mechanism of the mutex applies unchanged, because nothing else decides a grant: the
 *   probe and its restart, rollback, eviction and clock checks, the quarantine, the maxTtl
 *   agreement, the cleanup of a failed attempt on every node, bounded retries. What this file adds
 *   only chooses which slots an attempt asks for (semaphore-slots.ts) and when to try again
 *   (acquire-loop.ts): a wrong choice is a refused attempt, never a second holder of a slot.
 * - Fences. A grant takes its fence from the fence round of the mutex (fence-round.ts), whose
 *   argument holds per lock key: fences are strictly increasing across the grants of each slot.
 *   Across slots they are not ordered (two permits whose acquires overlap may carry fences in either
 *   order), so a permit carries its slots with its fence, and a fenced store keeps one mark per slot.
 * - The same `limit` everywhere is an assumption, like one maxTtlMs: a client with a larger limit
 *   asks for slots another does not count. Each holder records its limit in its metadata, and a slot
 *   read refuses (SemaphoreLimitMismatchError) when a live holder's differs, or when slot `limit`
 *   is held; two clients that both read before either was granted can still disagree once
 *   (packages/redlock/README.md, Assumptions).
 */
import type { AttemptSource, RetryOptions } from './acquire-loop';
import { InvalidArgumentError, LockContendedError, SemaphoreLimitMismatchError, type RedlockError } from './errors';
import { semaphoreSlotKey, semaphoreSlotName } from './keys';
import type { LockController, LockState } from './lock';
import { Permit } from './permit';
import { attemptAcquire, type AcquireRequest, type AttemptOutcome, type ProtocolContext } from './protocol';
import { prepareAcquire } from './request';
import { chooseFreeSlots, LIMIT_FIELD, pickPreferring, range } from './semaphore-slots';
import type { SlotClaims } from './slot-claims';
import { describe } from './settings';
import { checkResources } from './validate';
import { LIMITS } from './vocabulary';

/** Options of one acquireSemaphore() / usingSemaphore(): the acquire options, and how many permits. */
export interface SemaphoreOptions extends RetryOptions {
  /** Permits to take at once, all or nothing (1 … min(limit, 64)). @default 1 */
  permits?: number;
  /** Issue a fencing token (strictly increasing per slot). @default true */
  fenced?: boolean;
  /** Holder metadata, as for acquire(); `limit` is written by the core. */
  metadata?: Record<string, string>;
}

/** A semaphore acquire, validated: its slots' keys and names (0 … limit, one more than there are: see semaphore-slots.ts). */
interface SemaphoreRequest {
  readonly resource: string;
  readonly limit: number;
  readonly permits: number;
  readonly base: AcquireRequest;
  readonly keys: readonly string[];
  readonly names: readonly string[];
}

/** Validate a semaphore acquire (InvalidArgumentError before any traffic). */
export function prepareSemaphore(
  ctx: ProtocolContext,
  resource: unknown,
  limit: unknown,
  ttlMs: unknown,
  options: unknown,
): SemaphoreRequest {
  if (typeof options !== 'object' || options === null)
    throw new InvalidArgumentError('options', `must be an object, got ${describe(options)}`);
  if (typeof resource !== 'string') throw new InvalidArgumentError('resource', `must be a string, got ${describe(resource)}`);
  try {
    checkResources(resource);
  } catch (err) {
    // The rule of a lock's name, reported under this call's own argument.
    if (err instanceof InvalidArgumentError) throw new InvalidArgumentError('resource', err.message.slice(err.argument.length + 2));
    throw err;
  }
  const max = LIMITS.maxSemaphoreLimit;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > max)
    throw new InvalidArgumentError('limit', `must be a whole number of permits from 1 to ${max}, got ${describe(limit)}`);
  const opts = options as SemaphoreOptions;
  const permits = opts.permits ?? 1;
  const most = Math.min(limit, LIMITS.maxResources);
  if (typeof permits !== 'number' || !Number.isInteger(permits) || permits < 1 || permits > most)
    throw new InvalidArgumentError(
      'permits',
      `must be a whole number from 1 to ${most} (the limit, at most ${LIMITS.maxResources}), got ${describe(permits)}`,
    );
  const metadata: unknown = opts.metadata;
  if (typeof metadata === 'object' && metadata !== null && Object.hasOwn(metadata, LIMIT_FIELD))
    throw new InvalidArgumentError(`metadata.${LIMIT_FIELD}`, 'is written by the lock core for a semaphore and cannot be set');
  // The semaphore's name, the ttl, `fenced` and the metadata are checked as acquire() checks them.
  const base = prepareAcquire(ctx.settings, resource, ttlMs, { fenced: opts.fenced, metadata: opts.metadata });
  const prefix = ctx.settings.keyPrefix;
  const slots = range(limit + 1);
  return {
    resource,
    limit,
    permits,
    base: { ...base, metaHead: `${base.metaHead},"${LIMIT_FIELD}":"${limit}"` },
    keys: slots.map((i) => semaphoreSlotKey(prefix, resource, i)),
    names: slots.map((i) => semaphoreSlotName(resource, i)),
  };
}

/**
 * The attempts of one semaphore acquire: the first asks for random slots; after a contended
 * attempt, each reads every slot first and asks for slots free on a quorum (or, when fewer than
 * `permits` are, fails as contended without asking, to wait for a release of any slot).
 */
export class SemaphoreAttempts implements AttemptSource<Permit> {
  /** The slots' names the last attempt asked for (every slot's after a read that asked for none). */
  resources: readonly string[];
  readonly wakeOn: readonly string[];
  readonly wakeEach = true;
  private readonly all: readonly number[];
  private readNext = false;
  private asked: { req: AcquireRequest; slots: readonly number[] } | null = null;

  constructor(
    private readonly ctx: ProtocolContext,
    private readonly controller: LockController,
    private readonly sem: SemaphoreRequest,
    private readonly claims: SlotClaims,
  ) {
    this.wakeOn = sem.names.slice(0, sem.limit);
    this.all = range(sem.limit);
    this.resources = this.wakeOn;
  }

  async attempt(): Promise<AttemptOutcome> {
    const { resource, limit, permits, keys, names } = this.sem;
    let free = this.all;
    if (this.readNext) {
      const choice = await chooseFreeSlots(this.ctx, resource, keys, names, limit, permits);
      if (!choice.ok) {
        this.resources = this.wakeOn;
        return { ok: false, error: choice.error, split: false, unanswered: null };
      }
      free = choice.free;
    }
    // Slots this Redlock is not already asking for or holding first (slot-claims.ts).
    // Frozen, as a lock's resources are (validate.ts): the permit hands both to its holder.
    const slots = Object.freeze(pickPreferring(free, this.claims.busy(resource), permits));
    const req: AcquireRequest = {
      ...this.sem.base,
      resources: Object.freeze(slots.map((i) => names[i]!)),
      lockKeys: slots.map((i) => keys[i]!),
    };
    this.asked = { req, slots };
    this.resources = req.resources;
    this.claims.claim(resource, slots);
    let outcome: AttemptOutcome;
    try {
      outcome = await attemptAcquire(this.ctx, req);
    } catch (err) {
      this.claims.settle(resource, slots, null);
      throw err;
    }
    if (outcome.ok) return outcome; // grant() settles the claim
    this.claims.settle(resource, slots, null);
    this.readNext = outcome.error.name === 'LockContendedError';
    const mismatch = holderMismatch(outcome.error, resource, limit);
    return mismatch ? { ...outcome, error: mismatch } : outcome;
  }

  grant(outcome: Extract<AttemptOutcome, { ok: true }>, state: LockState): Permit {
    const { req, slots } = this.asked!;
    const { resource, limit } = this.sem;
    const permit = new Permit(this.controller, req.resources, outcome.token, outcome.fence, outcome.votes, req.lockKeys, state, {
      resource,
      limit,
      slots,
    });
    this.claims.settle(resource, slots, permit);
    return permit;
  }
}

/** A refused attempt whose holder recorded another limit: the mismatch, or null. */
function holderMismatch(error: RedlockError, resource: string, limit: number): SemaphoreLimitMismatchError | null {
  if (!(error instanceof LockContendedError)) return null;
  const recorded = error.holder?.[LIMIT_FIELD];
  if (recorded === undefined || recorded === String(limit)) return null;
  return new SemaphoreLimitMismatchError(
    `acquire semaphore ${JSON.stringify(resource)}: a holder was granted its permit with limit ${recorded}, this client uses ${limit}: ` +
      'every client of a semaphore must use the same limit',
    error.votes,
    error.resources,
    Number(recorded),
    limit,
  );
}
