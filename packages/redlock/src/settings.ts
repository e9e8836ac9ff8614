import { InvalidArgumentError } from './errors';

/** Tuning of a {@link Redlock}. Every field has a default in {@link DEFAULT_SETTINGS}. */
export interface RedlockSettings {
  /**
   * Fraction of the ttl allowed for clock drift between the client and the nodes; the validity of
   * a lease is ttl − elapsed − (ttl × driftFactor + 2 ms).
   * @default 0.01
   */
  driftFactor: number;
  /**
   * How long one round (acquire, fence confirmation, extend, release) waits for the nodes, in ms.
   * Every node of a round shares the same deadline (one timer per round). A node that has not
   * answered by then votes against.
   *
   * 100 ms: a healthy Redis on a LAN answers in well under 1 ms and a loaded client's event loop
   * adds a few ms, so healthy nodes are not counted out even at high concurrency; yet a
   * partitioned majority fails an acquire in ~100 ms, and a round never costs a 10 s lease more
   * than 1% of its validity (the Redlock page suggests 5–50 ms for 10 s; we allow for pauses).
   * A node that lets a round's whole nodeTimeoutMs pass unanswered is stalled: until it answers
   * again, releases still go to it but do not wait for it (it votes `error`, NodeStalledError).
   * @default 100
   */
  nodeTimeoutMs: number;
  /**
   * How many times an acquire sleeps and retries after a failed attempt (0: one attempt only).
   * Waiters woken early by a release (or backing off briefly after a split vote) retry without
   * using up a retry: the time they did not sleep is kept for later, so the total wait stays
   * bounded by retryCount × (retryDelayMs + retryJitterMs).
   * @default 10
   */
  retryCount: number;
  /**
   * Base sleep between attempts, in ms.
   * @default 200
   */
  retryDelayMs: number;
  /**
   * Each sleep is drawn uniformly from [retryDelayMs − retryJitterMs, retryDelayMs + retryJitterMs].
   * @default 100
   */
  retryJitterMs: number;
  /**
   * The cluster's lease ceiling in ms: a larger ttl is refused, and a node that lost its data or
   * restarted is quarantined for this long. Every client of one cluster (and key prefix) must use
   * the same value, since a quarantine is only as long as the ceiling of the client that starts it:
   * the nodes record the ceiling, and a node whose recorded ceiling differs votes against
   * (`ceiling-mismatch`; the acquire fails with MaxTtlMismatchError). A client starts a quarantine
   * on a node without a sentinel only after another node confirmed its ceiling.
   * @default 60000
   */
  maxTtlMs: number;
  /**
   * Prefix of every key: `<prefix>lock:<resource>` (value `<token> <metadata>`), `<prefix>fence`,
   * `<prefix>epoch`, and the channel `<prefix>released`.
   * @default 'rl:'
   */
  keyPrefix: string;
  /**
   * Check the epoch sentinel on every acquire, so that a node that lost its data votes against
   * until its lost locks have expired. `false` is an explicit UNSAFE setting: a node restarted
   * without persistence can then grant a lock another client still holds (two holders at once).
   * Use it only for demonstrations and negative controls.
   * @default true
   */
  quarantine: boolean;
  /**
   * Detect what a missing sentinel does not show (scripts/probe.lua): a redis-server that restarted
   * (a new INFO run_id: it may have loaded an older RDB snapshot or AOF) sits out a quarantine until
   * its start + maxTtlMs; a node whose maxmemory-policy can evict keys votes against
   * (`unsafe-eviction`); evicted keys since the last check start a quarantine. `false` is an
   * explicit UNSAFE setting (only a missing sentinel is detected), for negative controls.
   * @default true
   */
  nodeChecks: boolean;
  /**
   * How often (ms) each node's process, eviction policy and evicted keys are checked again (the
   * check rides on a grant's probe: no extra round trip). A `CONFIG SET maxmemory-policy` between
   * two checks is the window in which an evicting node may still vote. A restart is found at once
   * whatever this is (see scripts/probe.lua).
   * @default 1000
   */
  nodeCheckIntervalMs: number;
  /**
   * `using()` extends the lock when its remaining validity drops to this many ms (at most half the
   * ttl, so short leases are extended at their midpoint).
   * @default 500
   */
  automaticExtensionThresholdMs: number;
  /**
   * How many automatic extensions one `using()` may make; after that its signal aborts with a
   * LockExpiredError. Bounded by default so a stuck routine cannot hold a lock forever
   * (Infinity is allowed when you mean it).
   * @default 100
   */
  maxExtensions: number;
  /**
   * Commands in flight on one node beyond which further commands to it fail at once (the node
   * votes `error`) instead of queueing without bound behind a partition. A grant batch counts
   * each of its commands; a node with nothing in flight always takes one batch.
   * @default 4096
   */
  maxPendingPerNode: number;
  /**
   * How long the pub/sub connections used to wake waiters stay open after the last waiter left, ms.
   * @default 1000
   */
  subscriberLingerMs: number;
  /**
   * When the commands queued for a node are written to its socket, as one write:
   * - `'tick'`: once the callback that queued them and its promise continuations are done
   *   (process.nextTick). The fewest event-loop hops: best for a process taking one lock at a time,
   *   or many from one place (a loop, Promise.all).
   * - `'io'`: at the end of the event loop's I/O phase (setImmediate), so the commands of every
   *   callback of that turn go out together: what a server taking locks for requests arriving on
   *   many connections wants (one write per node per turn instead of one per request; the console's
   *   HTTP lock service uses it). Costs one event-loop hop per round.
   * Only the moment and the number of writes change, never what is written, to which node, or in
   * which order (see node-wire.ts): mutual exclusion and fence order do not depend on it.
   * @default 'tick'
   */
  writeCoalescing: 'tick' | 'io';
  /**
   * Fenced acquires propose their fence with the grant (fence-ahead.ts): one round trip instead of
   * two when this client's view of the fence registers is current (no other client granted in
   * between); otherwise the fence round runs as with `false`. Either way a fence is strictly above
   * every earlier grant's of the resource. `false`: always the fence round after the grant.
   * @default true
   */
  fenceAhead: boolean;
}

export const DEFAULT_SETTINGS: Readonly<RedlockSettings> = Object.freeze({
  driftFactor: 0.01,
  nodeTimeoutMs: 100,
  retryCount: 10,
  retryDelayMs: 200,
  retryJitterMs: 100,
  maxTtlMs: 60_000,
  keyPrefix: 'rl:',
  quarantine: true,
  nodeChecks: true,
  nodeCheckIntervalMs: 1_000,
  automaticExtensionThresholdMs: 500,
  maxExtensions: 100,
  maxPendingPerNode: 4096,
  subscriberLingerMs: 1_000,
  writeCoalescing: 'tick',
  fenceAhead: true,
});

/** Longest ttl / maxTtlMs accepted: one day. */
export const MAX_LEASE_CEILING_MS = 86_400_000;
/** Longest retry delay or jitter accepted: one hour. */
export const MAX_RETRY_DELAY_MS = 3_600_000;
/** Most retries accepted per acquire. */
export const MAX_RETRY_COUNT = 100_000;

function integerIn(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(name, `must be a whole number from ${min} to ${max}, got ${describe(value)}`);
  }
  return value;
}

export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || value == null) return String(value);
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/** Check the retry options of one acquire (or the defaults); InvalidArgumentError on a bad one. */
export function checkRetryCount(name: string, value: unknown): number {
  return integerIn(name, value, 0, MAX_RETRY_COUNT);
}

export function checkDelay(name: string, value: unknown): number {
  return integerIn(name, value, 0, MAX_RETRY_DELAY_MS);
}

/** Merge `partial` over the defaults, validate every field, and freeze the result. */
export function resolveSettings(partial: Partial<RedlockSettings> = {}): Readonly<RedlockSettings> {
  if (typeof partial !== 'object' || partial === null)
    throw new InvalidArgumentError('settings', `must be an object, got ${describe(partial)}`);
  for (const key of Object.keys(partial)) {
    if (!(key in DEFAULT_SETTINGS)) throw new InvalidArgumentError(`settings.${key}`, 'is not a setting');
  }
  const s: RedlockSettings = { ...DEFAULT_SETTINGS };
  for (const [key, value] of Object.entries(partial)) {
    if (value !== undefined) (s as unknown as Record<string, unknown>)[key] = value;
  }
  if (typeof s.driftFactor !== 'number' || !Number.isFinite(s.driftFactor) || s.driftFactor < 0 || s.driftFactor >= 0.5) {
    throw new InvalidArgumentError('settings.driftFactor', `must be a number in [0, 0.5), got ${describe(s.driftFactor)}`);
  }
  integerIn('settings.maxTtlMs', s.maxTtlMs, 1, MAX_LEASE_CEILING_MS);
  integerIn('settings.nodeTimeoutMs', s.nodeTimeoutMs, 1, 60_000);
  checkRetryCount('settings.retryCount', s.retryCount);
  checkDelay('settings.retryDelayMs', s.retryDelayMs);
  checkDelay('settings.retryJitterMs', s.retryJitterMs);
  if (typeof s.keyPrefix !== 'string' || s.keyPrefix.length > 128) {
    throw new InvalidArgumentError('settings.keyPrefix', `must be a string of at most 128 characters, got ${describe(s.keyPrefix)}`);
  }
  if (typeof s.quarantine !== 'boolean')
    throw new InvalidArgumentError('settings.quarantine', `must be a boolean, got ${describe(s.quarantine)}`);
  if (typeof s.nodeChecks !== 'boolean')
    throw new InvalidArgumentError('settings.nodeChecks', `must be a boolean, got ${describe(s.nodeChecks)}`);
  integerIn('settings.nodeCheckIntervalMs', s.nodeCheckIntervalMs, 10, 3_600_000);
  integerIn('settings.automaticExtensionThresholdMs', s.automaticExtensionThresholdMs, 0, MAX_LEASE_CEILING_MS);
  if (s.maxExtensions !== Number.POSITIVE_INFINITY) integerIn('settings.maxExtensions', s.maxExtensions, 0, Number.MAX_SAFE_INTEGER);
  integerIn('settings.maxPendingPerNode', s.maxPendingPerNode, 1, 1_000_000);
  integerIn('settings.subscriberLingerMs', s.subscriberLingerMs, 0, 3_600_000);
  if (s.writeCoalescing !== 'tick' && s.writeCoalescing !== 'io')
    throw new InvalidArgumentError('settings.writeCoalescing', `must be 'tick' or 'io', got ${describe(s.writeCoalescing)}`);
  if (typeof s.fenceAhead !== 'boolean')
    throw new InvalidArgumentError('settings.fenceAhead', `must be a boolean, got ${describe(s.fenceAhead)}`);
  return Object.freeze(s);
}
