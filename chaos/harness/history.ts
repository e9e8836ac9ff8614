/**
 * The history of a chaos run: what the client processes did (acquire, extend, write, release),
 * what the fenced register decided, and what the nemesis did. Every time is nanoseconds on
 * CLOCK_MONOTONIC (process.hrtime.bigint(), one clock for every local process) since the run's
 * origin, as a JS number (exact: a run lasts far less than 2^53 ns ≈ 104 days).
 */

/** What a slot loop or a scripted step takes: semaphore permits, a read lock or a write lock. */
export type SlotKind = 'sem' | 'read' | 'write';

/** Nanoseconds since the run's origin on CLOCK_MONOTONIC. */
export type Ns = number;

/**
 * One character per node for a round's votes: `f` for (granted / deleted), `c` contended,
 * `q` quarantined, `u` unsafe eviction policy, `m` ceiling mismatch, `l` lost, `n` not held,
 * `t` timeout, `p` pending, `e` error, `x` not asked.
 */
export type VoteString = string;

export type ClientEvent =
  | { e: 'acquire-invoke'; lock: string; client: number; resource: string; fenced: boolean; t: Ns }
  /**
   * A semaphore or read-write lock acquire (chaos/workers/slot-loop.ts): `kind` sem (`permits` of
   * `limit`), read or write (`limit` is maxReaders) on the object `name`. Its ok, fail, extend, write
   * and release events are the mutex's, by its lock id; its acquire-ok carries the slots granted.
   */
  | {
      e: 'slot-acquire-invoke';
      lock: string;
      client: number;
      kind: SlotKind;
      name: string;
      limit: number;
      permits: number;
      fenced: boolean;
      t: Ns;
    }
  /**
   * `validUntil`: the validity end the client computed at the grant (t + lock.validityMs).
   * `validityAtReturnMs`: lock.expiresAt − Date.now() right after acquire() returned (may be < 0).
   */
  /** `decided`: when the core decided the grant (its 'acquire' event), if the client recorded it. */
  | {
      e: 'acquire-ok';
      lock: string;
      t: Ns;
      validUntil: Ns;
      fence: number | null;
      votes: VoteString;
      validityAtReturnMs: number;
      decided?: Ns;
      /** The slots of a semaphore permit or read-write lock (absent for a mutex). */
      slots?: number[];
    }
  /**
   * `leftovers`: nodes that answered the rejected acquire yet held one of its keys right after the
   * rejection (read by chaos/workers/leftovers.ts; absent when not read); `unread`: nodes not read;
   * `pending`: the error's cleanupPending (nodes where its keys may remain).
   */
  | { e: 'acquire-fail'; lock: string; t: Ns; error: string; leftovers?: number[]; unread?: number; pending?: number[] }
  | { e: 'extend-invoke'; lock: string; t: Ns }
  | { e: 'extend-ok'; lock: string; t: Ns; validUntil: Ns }
  | { e: 'extend-fail'; lock: string; t: Ns; error: string }
  /** A write to the register as the client saw it (`t` invoke, `done` reply). */
  | { e: 'write'; lock: string; t: Ns; done: Ns; fence: number | null; accepted: boolean }
  | { e: 'release-invoke'; lock: string; t: Ns }
  | { e: 'release-ok'; lock: string; t: Ns; votes: VoteString };

/** One write as the register decided it, in the register's order. */
export interface RegisterRecord {
  resource: string;
  lock: string;
  fence: number | null;
  t: Ns;
  accepted: boolean;
}

export type NemesisEvent =
  | { t: Ns; kind: 'fault'; what: string }
  | { t: Ns; kind: 'heal'; what: string }
  /**
   * Node `node` (0-based) lost data: it came back without it (restart with persistence `none`), or
   * with an older copy (an older RDB snapshot or AOF), or evicted keys. `since`: the loss went on
   * from then until `t` (evictions under memory pressure), not at one instant.
   */
  | { t: Ns; kind: 'data-loss'; node: number; since?: Ns }
  /**
   * Client process `client` (0-based) was SIGSTOPped by the runner at a moment of the runner's
   * choosing / resumed (the pause-client nemesis's holder pauses; not its mid-acquire self-stops).
   */
  | { t: Ns; kind: 'client-stop'; client: number }
  | { t: Ns; kind: 'client-resume'; client: number };

/** A nemesis event before it is stamped with its time. */
export type NemesisAction = NemesisEvent extends infer E ? (E extends NemesisEvent ? Omit<E, 't'> : never) : never;

/** Everything one phase produced, as the checkers take it. */
export interface PhaseHistory {
  events: readonly ClientEvent[];
  register: readonly RegisterRecord[];
  nemesis: readonly NemesisEvent[];
  /** Lock keys still on a node after quiescence + ttl. */
  leakedKeys: readonly LeakedKey[];
  /** Lock keys on the nodes at quiescence, before the leases ran out (absent: not scanned). */
  liveKeys?: readonly LiveKey[];
  /** Semaphore slot and read-write lock keys still on a node after quiescence + ttl (absent: not scanned). */
  leakedSlotKeys?: readonly LeakedKey[];
  /** Semaphore slot and read-write lock keys at quiescence (absent: not scanned). */
  liveSlotKeys?: readonly LiveKey[];
}

/** The holder-metadata field in which every chaos acquire writes its lock id (so a key names its acquire). */
export const ATTEMPT_FIELD = 'attempt';

/** The lock id a lock value's metadata names (ATTEMPT_FIELD), or null. */
export function attemptOf(value: string): string | null {
  const at = value.indexOf(`"${ATTEMPT_FIELD}":"`);
  if (at < 0) return null;
  const start = at + ATTEMPT_FIELD.length + 4;
  const end = value.indexOf('"', start);
  return end < 0 ? null : value.slice(start, end);
}

/** A lock key read at quiescence (the clients stopped, the leases not yet over), with its value. */
export interface LiveKey {
  node: number;
  key: string;
  value: string;
}

export interface LeakedKey {
  node: number;
  key: string;
  /** PTTL at the scan: −1 none, else ms left. */
  pttlMs: number;
}

/** Register resources: `f:` names are fenced registers, `u:` names unfenced ones. */
export function isFencedResource(resource: string): boolean {
  return resource.startsWith('f:');
}

const VOTE_CODES: Record<string, string> = {
  ok: 'f',
  contended: 'c',
  quarantined: 'q',
  'unsafe-eviction': 'u',
  'ceiling-mismatch': 'm',
  lost: 'l',
  'not-held': 'n',
  timeout: 't',
  pending: 'p',
  error: 'e',
  'not-asked': 'x',
};

/** Encode per-node votes (`{ vote, reason }`) as a VoteString. */
export function encodeVotes(votes: readonly { vote: string; reason: string }[]): VoteString {
  let out = '';
  for (const v of votes) out += v.vote === 'for' ? 'f' : (VOTE_CODES[v.reason] ?? '?');
  return out;
}

/** Nanoseconds since `origin` now. */
export function nowNs(origin: bigint): Ns {
  return Number(process.hrtime.bigint() - origin);
}

export const NS_PER_MS = 1_000_000;
