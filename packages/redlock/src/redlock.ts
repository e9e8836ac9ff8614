import type { RedlockNodeTarget } from './client-detect';
import { epochKey, lockKeyPrefix, lockKeysOf, releaseChannel } from './keys';
import { acquireLoop, retryPlan, type AcquireHost, type AttemptSource } from './acquire-loop';
import { InvalidArgumentError, LockExpiredError } from './errors';
import { Lock, type ExtendResult, type LockController, type LockState, type ReleaseResult } from './lock';
import { LockNode } from './node';
import { closedError } from './closed-error';
import { checkNodeTargets } from './node-targets';
import { RedlockEmitter } from './redlock-emitter';
import { attemptAcquire, type ProtocolContext } from './protocol';
import { extendKeys } from './extend-round';
import { releaseKeys } from './release-round';
import { Permit } from './permit';
import { quorumSize } from './quorum';
import { checkLeaseTtl, prepareAcquire, probesOf } from './request';
import { prepareSemaphore, SemaphoreAttempts, type SemaphoreOptions } from './semaphore';
import { acquireRw, usingRw, type RwHost, type RwLockOptions, type RwRoutine } from './rwlock';
import type { RwLock } from './rwlock-handle';
import { SlotClaims } from './slot-claims';
import { slotTargets, type SlotKind } from './slot-tokens';
import { resolveSettings, type RedlockSettings } from './settings';
import { runUsing } from './using';
import { markCleanOutcome, markCleanTimeout, type MarkCleanOptions, type MarkCleanResult } from './mark-clean-outcome';
import { markNodeCleanVote } from './mark-clean-nodes';
import { checkResources, checkToken } from './validate';
import { ReleaseWaiters } from './waiters';

/** Options of one acquire() / using(). */
export interface AcquireOptions {
  /** Issue a fencing token (a second, confirming round). @default true */
  fenced?: boolean;
  /** Overrides settings.retryCount for this call. */
  retryCount?: number;
  /** Overrides settings.retryDelayMs for this call. */
  retryDelayMs?: number;
  /** Overrides settings.retryJitterMs for this call. */
  retryJitterMs?: number;
  /**
   * Stop retrying once this many ms have passed since the acquire began (no sleep runs past it;
   * the attempt that starts at its end is the last), and reject with the last attempt's error: a wait that
   * ran out says why, contention (LockContendedError) or an outage (QuorumUnavailableError), where
   * a `signal` that times out can only say it was aborted. Bounded by `retryCount` too. @default no bound
   */
  maxWaitMs?: number;
  /** Cancels waiting: the acquire rejects with `signal.reason` (an AbortError by default). */
  signal?: AbortSignal;
  /** Holder metadata, written into the lock's value after the token (≤ 16 string fields of ≤ 256 characters). */
  metadata?: Record<string, string>;
}

/**
 * Redlock over N independent Redis masters, with fencing tokens, data-loss quarantine, holder
 * metadata, automatic extension (using) and waiter wake-up on release. See src/protocol.ts
 * for the protocol and its safety arguments, and ARCHITECTURE.md for the key layout.
 */
export class Redlock extends RedlockEmitter implements LockController {
  readonly settings: Readonly<RedlockSettings>;
  /** The configured N (quorums count against it, whatever answers). */
  readonly nodeCount: number;
  /** ⌊N/2⌋+1 */
  readonly quorum: number;
  /** host:port of each node, in order (no credentials). */
  readonly nodeLabels: readonly string[];
  private readonly nodes: readonly LockNode[];
  private readonly ctx: ProtocolContext;
  private readonly waiters: ReleaseWaiters;
  /** The semaphore slots this Redlock is asking for or holds (its own acquires prefer others). */
  private readonly slotClaims = new SlotClaims();
  /** What the acquire loop needs of this Redlock (acquire-loop.ts). */
  private readonly host: AcquireHost;
  /** What a read-write lock needs of this Redlock (rwlock.ts), with its own reader slot claims. */
  private readonly rw: RwHost;
  /** The `settled` of releases answered at a quorum whose other nodes have not all answered yet. */
  private readonly releasing = new Set<Promise<ReleaseResult>>();
  private readonly lockPrefix: string;
  private readonly quarantineSeen: number[];
  /** The mutable state of each lock this Redlock granted. */
  private readonly states = new WeakMap<Lock, LockState>();
  /** Locks already reported lost: 'lock-lost' fires once per lock, whoever notices first (extend, using()). */
  private readonly reportedLost = new WeakSet<Lock>();
  private closed = false;

  /**
   * `nodes`: redis:// URLs (the core opens its own connections), or clients you pass in and keep
   * owning: ioredis 5 or 6, node-redis 5 (connected), or an adapter (ioredisClient(),
   * nodeRedisClient(), or your own RedlockClient: client.ts says what it must keep).
   */
  constructor(nodes: readonly RedlockNodeTarget[], settings: Partial<RedlockSettings> = {}) {
    super();
    this.settings = resolveSettings(settings);
    const { targets, labels } = checkNodeTargets(nodes);
    const onNodeError = (node: LockNode, error: Error) => this.emit('node-error', { node: node.number, label: node.label, error });
    const created = targets.map(
      (target, i) =>
        new LockNode(i, target, this.settings.maxPendingPerNode, onNodeError, this.settings.nodeTimeoutMs, this.settings.writeCoalescing),
    );
    this.nodes = created;
    this.nodeLabels = Object.freeze(labels);
    this.nodeCount = created.length;
    this.quorum = quorumSize(created.length);
    this.quarantineSeen = new Array<number>(created.length).fill(0);
    // This Redlock's probes and its view of the cluster (made once; prepareAcquire finds them).
    const probes = probesOf(this.settings, created.length);
    const prefix = this.settings.keyPrefix;
    this.lockPrefix = lockKeyPrefix(prefix);
    this.ctx = {
      nodes: created,
      quorum: this.quorum,
      settings: this.settings,
      channel: releaseChannel(prefix),
      onNodeError,
      onQuarantine: (node, until, discovered, cause) => {
        if (this.quarantineSeen[node.index] === until && !discovered) return;
        this.quarantineSeen[node.index] = until;
        this.emit('quarantine', { node: node.number, label: node.label, until, discovered, ...(cause ? { cause } : {}) });
      },
    };
    probes.cluster.reseedFrom = this.ctx;
    this.waiters = new ReleaseWaiters(created, this.ctx.channel, this.settings.subscriberLingerMs, onNodeError);
    this.host = {
      waiters: this.waiters,
      isClosed: () => this.closed,
      closedError: (names) => closedError(this.nodes, names),
      track: (lock, state) => this.states.set(lock, state),
      releaseLock: (lock) => this.releaseLock(lock),
      emitAcquire: (...args) => {
        if (this.listenerCount('acquire') > 0) this.emitOutcome('acquire', ...args);
      },
    };
    this.rw = { ctx: this.ctx, host: this.host, controller: this, claims: new SlotClaims(), lockLost: (l, r) => this.reportLost(l, r) };
  }

  /** The key of `resource`'s lock: `<prefix>lock:<resource>`. */
  lockKey(resource: string): string {
    return this.lockPrefix + resource;
  }

  /**
   * Resolve once the first connection attempt to every node this Redlock opened has settled
   * (connected or failed), or after `timeoutMs`. Optional: without it, a node still connecting
   * when the first acquire starts simply votes `timeout`. Waiting here happens before an attempt's
   * clock starts, so it cannot lengthen a validity: mutual exclusion is untouched.
   */
  async connect(timeoutMs = 2_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(this.nodes.map((node) => node.whenBooted())),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
  }

  /**
   * Acquire `resources` (all or nothing) for `ttlMs`. Rejects with InvalidArgumentError before any
   * traffic on bad input; after the retries with the last attempt's LockContendedError,
   * QuorumUnavailableError or LockExpiredError; or with `options.signal.reason` when aborted.
   */
  async acquire(resources: string | string[], ttlMs: number, options: AcquireOptions = {}): Promise<Lock> {
    const started = performance.now();
    const req = prepareAcquire(this.settings, resources, ttlMs, options);
    const plan = retryPlan(this.settings, options, started);
    if (this.closed) throw closedError(this.nodes, req.resources);
    const ctx = this.ctx;
    const source: AttemptSource<Lock> = {
      resources: req.resources,
      wakeOn: req.resources,
      attempt: () => attemptAcquire(ctx, req),
      grant: (outcome, state) => new Lock(this, req.resources, outcome.token, outcome.fence, outcome.votes, req.lockKeys, state),
    };
    return acquireLoop(this.host, source, plan, started);
  }

  /**
   * Take `options.permits` (default 1) of the `limit` permits of the semaphore `resource` for
   * `ttlMs`, all or nothing: each permit is one of `limit` slot mutexes (semaphore.ts argues why
   * at most `limit` holders ever hold one within their validity). The same retries, `maxWaitMs`
   * and `signal` as acquire(); a full semaphore waits for a release of any of its slots. Rejects
   * with InvalidArgumentError before any traffic on bad input, SemaphoreLimitMismatchError when a
   * holder uses another `limit`, or as acquire() does.
   */
  async acquireSemaphore(resource: string, limit: number, ttlMs: number, options: SemaphoreOptions = {}): Promise<Permit> {
    const started = performance.now();
    const sem = prepareSemaphore(this.ctx, resource, limit, ttlMs, options);
    const plan = retryPlan(this.settings, options, started);
    if (this.closed) throw closedError(this.nodes, [resource]);
    return acquireLoop(this.host, new SemaphoreAttempts(this.ctx, this, sem, this.slotClaims), plan, started);
  }

  /** acquireSemaphore(), then run `routine(signal, permit)` as using() runs its routine: extended automatically, released at the end. */
  async usingSemaphore<T>(
    resource: string,
    limit: number,
    ttlMs: number,
    routine: (signal: AbortSignal, permit: Permit) => Promise<T>,
    options: SemaphoreOptions = {},
  ): Promise<T> {
    if (typeof routine !== 'function') throw new InvalidArgumentError('routine', 'must be a function');
    const permit = await this.acquireSemaphore(resource, limit, ttlMs, options);
    const host = { settings: this.settings, lockLost: (l: Lock, reason: Error) => this.reportLost(l, reason) };
    return runUsing(host, permit, ttlMs, (signal) => routine(signal, permit), options.signal);
  }

  /** A read lock of `resource`: one of `maxReaders` reader slots, shared with readers, never with a writer; waits while a writer waits (rwlock.ts). */
  acquireRead(resource: string, ttlMs: number, options: RwLockOptions = {}): Promise<RwLock> {
    return acquireRw(this.rw, 'read', resource, ttlMs, options);
  }

  /** The write lock of `resource`: every reader slot in one grant, fenced; readers and writers excluded (rwlock.ts). */
  acquireWrite(resource: string, ttlMs: number, options: RwLockOptions = {}): Promise<RwLock> {
    return acquireRw(this.rw, 'write', resource, ttlMs, options);
  }

  /** acquireRead(), then `routine(signal, lock)` as using() runs it. */
  usingRead<T>(resource: string, ttlMs: number, routine: RwRoutine<T>, options: RwLockOptions = {}): Promise<T> {
    return usingRw(this.rw, 'read', resource, ttlMs, routine, options);
  }

  /** acquireWrite(), then `routine(signal, lock)` as using() runs it. */
  usingWrite<T>(resource: string, ttlMs: number, routine: RwRoutine<T>, options: RwLockOptions = {}): Promise<T> {
    return usingRw(this.rw, 'write', resource, ttlMs, routine, options);
  }

  /**
   * Acquire, run `routine(signal, lock)` while extending the lock automatically, and release at
   * the end whatever happened. The signal aborts (reason: the extension's error, or a
   * LockExpiredError after maxExtensions) when the lock can no longer be kept: stop touching the
   * resource then. Resolves with the routine's result or rejects with its error.
   */
  async using<T>(
    resources: string | string[],
    ttlMs: number,
    routine: (signal: AbortSignal, lock: Lock) => Promise<T>,
    options: AcquireOptions = {},
  ): Promise<T> {
    if (typeof routine !== 'function') throw new InvalidArgumentError('routine', 'must be a function');
    const lock = await this.acquire(resources, ttlMs, options);
    return runUsing({ settings: this.settings, lockLost: (l, reason) => this.reportLost(l, reason) }, lock, ttlMs, routine, options.signal);
  }

  /** @internal Lock.extend() */
  async extendLock(lock: Lock, ttlMs: number): Promise<Lock> {
    checkLeaseTtl(ttlMs, this.settings);
    const state = this.stateOf(lock);
    const started = performance.now();
    const outcome = state.released
      ? { ok: false as const, error: new LockExpiredError('extend: the lock was released', [], lock.resources) }
      : await extendKeys(this.ctx, lock.resources, lock.keys, lock.token, ttlMs, state.validUntil);
    if (outcome.ok) {
      // Concurrent extends: keep the later end.
      if (outcome.validUntil > state.validUntil) {
        state.validUntil = outcome.validUntil;
        state.expiresAt = outcome.expiresAt;
      }
      state.extensions++;
      if (this.listenerCount('extend') > 0) this.emitOutcome('extend', lock.resources, true, started, outcome.votes, lock.fence, 1);
      return lock;
    }
    if (this.listenerCount('extend') > 0)
      this.emitOutcome('extend', lock.resources, false, started, outcome.error.votes, lock.fence, 1, outcome.error);
    if (outcome.error.name === 'LockExpiredError' && !state.released) this.reportLost(lock, outcome.error);
    throw outcome.error;
  }

  /** Emit 'lock-lost' for `lock`, once (an event only: nothing here touches a node). */
  private reportLost(lock: Lock, reason: Error): void {
    if (this.reportedLost.has(lock)) return;
    this.reportedLost.add(lock);
    this.emit('lock-lost', { lock, reason });
  }

  /** @internal Lock.release() */
  async releaseLock(lock: Lock): Promise<ReleaseResult> {
    const state = this.stateOf(lock);
    state.released = true;
    if (lock instanceof Permit) this.slotClaims.released(lock);
    return this.releaseInternal(lock.resources, lock.keys, lock.token, lock.fence);
  }

  /** Extend a lock known only by its token (the stateless HTTP lock service): compare-and-pexpire on every node, success on a quorum. */
  async extendToken(resources: string | string[], token: string, ttlMs: number): Promise<ExtendResult> {
    const names = checkResources(resources);
    return this.extendByToken(names, lockKeysOf(this.settings.keyPrefix, names), token, ttlMs);
  }

  /**
   * Extend or release a semaphore permit (…PermitToken) or a read or write lock (…RwToken) known
   * only by its token and slots (the HTTP lock service): the mutex's by-token rounds over the slots'
   * keys (slot-tokens.ts argues why exclusion and fence order hold). An extend rejects with
   * LockExpiredError when a quorum no longer holds the token on every slot named; a release is a
   * compare-and-delete (another holder's slot is never hit).
   */
  async extendPermitToken(resource: string, slots: readonly number[], token: string, ttlMs: number): Promise<ExtendResult> {
    return this.extendSlots('semaphore', resource, slots, token, ttlMs);
  }
  async releasePermitToken(resource: string, slots: readonly number[], token: string): Promise<ReleaseResult> {
    return this.releaseSlots('semaphore', resource, slots, token);
  }
  async extendRwToken(resource: string, slots: readonly number[], token: string, ttlMs: number): Promise<ExtendResult> {
    return this.extendSlots('rwlock', resource, slots, token, ttlMs);
  }
  async releaseRwToken(resource: string, slots: readonly number[], token: string): Promise<ReleaseResult> {
    return this.releaseSlots('rwlock', resource, slots, token);
  }
  private async extendSlots(
    kind: SlotKind,
    resource: string,
    slots: readonly number[],
    token: string,
    ttlMs: number,
  ): Promise<ExtendResult> {
    const target = slotTargets(kind, this.settings.keyPrefix, resource, slots);
    return this.extendByToken(target.names, target.keys, token, ttlMs);
  }
  private async releaseSlots(kind: SlotKind, resource: string, slots: readonly number[], token: string): Promise<ReleaseResult> {
    const target = slotTargets(kind, this.settings.keyPrefix, resource, slots);
    checkToken(token);
    return this.releaseInternal(target.names, target.keys, token, null);
  }

  /** With no client-side validity to check, the quorum itself is the proof: a quorum that still holds the token has held it without a gap. */
  private async extendByToken(names: readonly string[], keys: readonly string[], token: string, ttlMs: number): Promise<ExtendResult> {
    checkToken(token);
    checkLeaseTtl(ttlMs, this.settings);
    if (this.closed) throw closedError(this.nodes, names);
    const started = performance.now();
    const outcome = await extendKeys(this.ctx, names, keys, token, ttlMs, null);
    const [votes, error] = outcome.ok ? [outcome.votes, undefined] : [outcome.error.votes, outcome.error];
    if (this.listenerCount('extend') > 0) this.emitOutcome('extend', names, outcome.ok, started, votes, null, 1, error);
    if (!outcome.ok) throw outcome.error;
    const validityMs = Math.max(0, Math.floor(outcome.validUntil - performance.now()));
    return { resources: names, token, votes: outcome.votes, validityMs, expiresAt: outcome.expiresAt, durationMs: outcome.durationMs };
  }

  /** Release a lock known only by its token (compare-and-delete: a newer holder is never hit). */
  async releaseToken(resources: string | string[], token: string): Promise<ReleaseResult> {
    const names = checkResources(resources);
    checkToken(token);
    return this.releaseInternal(names, lockKeysOf(this.settings.keyPrefix, names), token, null);
  }

  /**
   * Write the clean epoch sentinel on every reachable node ("these hold no lost locks"), ending any
   * quarantine, and raise each fence register to the now × 1000 floor: once, on brand-new masters.
   * Resolves with each node's vote when at least a quorum was marked, else rejects with
   * QuorumUnavailableError. What it promises and why safety does not depend on it: mark-clean-nodes.ts.
   */
  async markNodesClean(options: MarkCleanOptions = {}): Promise<MarkCleanResult> {
    const timeoutMs = markCleanTimeout(options, this.settings.nodeTimeoutMs);
    const onNodeError = (node: LockNode, error: Error) => this.emit('node-error', { node: node.number, label: node.label, error });
    const votes = await Promise.all(this.nodes.map((node) => markNodeCleanVote(node, this.settings, timeoutMs, onNodeError)));
    return markCleanOutcome(votes, this.quorum);
  }

  /** The epoch sentinel key (it holds the fence register too) and the wake-up channel of this prefix (for inspection tools). */
  get systemKeys(): { epoch: string; channel: string } {
    return { epoch: epochKey(this.settings.keyPrefix), channel: this.ctx.channel };
  }

  /** Close the connections this Redlock opened (never a client passed in), after every release still settling on a slow node (at most nodeTimeoutMs). Idempotent. */
  async quit(): Promise<void> {
    this.closed = true;
    this.waiters.close();
    this.waiters.wakeAll();
    await Promise.all([...this.releasing]);
    await Promise.all(this.nodes.map((node) => node.close()));
  }

  private async releaseInternal(
    names: readonly string[],
    keys: readonly string[],
    token: string,
    fence: number | null,
  ): Promise<ReleaseResult> {
    const started = performance.now();
    const result = await releaseKeys(this.ctx, names, keys, token);
    if (!result.complete) {
      // Answered at a quorum: quit() waits for the rest (bounded by nodeTimeoutMs), so a delete
      // still on its way to a slow node (or re-sent with the script's source after a NOSCRIPT)
      // is not cut off by the connections closing.
      const rest = result.settled;
      this.releasing.add(rest);
      void rest.then(() => this.releasing.delete(rest));
    }
    // Reported when the caller is answered (in order with the caller's next operation), with the
    // votes it was answered with: nodes not heard from yet are `pending` (see release-round.ts).
    if (this.listenerCount('release') > 0) this.emitOutcome('release', names, result.deleted > 0, started, result.votes, fence, 1);
    return result;
  }

  private stateOf(lock: Lock): LockState {
    const state = this.states.get(lock);
    if (!state) throw new InvalidArgumentError('lock', 'was not granted by this Redlock');
    return state;
  }
}
