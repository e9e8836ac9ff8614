/**
 * The quorum view: what the masters say, together, about one lock key. Pure (no I/O): the
 * scanner and lockDetail read the nodes, this module decides what the readings mean.
 */
import { driftMs, quorumSize } from '@redlock-console/redlock';
import { DEFAULT_SETTINGS } from '@redlock-console/redlock';

/**
 * - `held`: one token on at least a quorum (⌊N/2⌋+1 of the configured N) with validity left above
 *   the expiring threshold (also a lock on every node read but too few for a quorum only because
 *   voters are down, when the nodes read are a quorum: `holders` < `quorum` then, the down nodes
 *   in `unknownNodes`);
 * - `expiring`: a majority token whose validity is at or below the threshold;
 * - `partial`: keys on fewer than a quorum of nodes, all with one token (a failed attempt's
 *   leftovers, or a lock that lost its majority);
 * - `split`: two or more distinct tokens and none with a majority.
 */
/** Every state, in the order the console lists them: the one definition (lib/api's schema and the UI derive theirs). */
export const LOCK_STATES = Object.freeze(['held', 'expiring', 'partial', 'split'] as const);
export type LockState = (typeof LOCK_STATES)[number];

/** One lock key as one node holds it (a string key: the token and its TTL). */
export interface ScannedLock {
  key: string;
  /** The resource name: the key without `<prefix>lock:` in our layout, else the key itself. */
  resource: string;
  /** The token: in our layout the value up to its first space, else the whole value. */
  token: string;
  /** Remaining TTL in ms; −1 for a key without expiry. */
  pttlMs: number;
  /**
   * Holder metadata (the JSON after the token in this key's value on this node, see meta.ts), or
   * null when absent (a bare token), unreadable (bad JSON) or not read.
   */
  meta: Record<string, string> | null;
  /** Was the metadata read on this node (so a null `meta` means there is none)? */
  metaRead?: boolean;
}

/** One node's cell in a quorum view. */
export interface LockCell {
  /** Node id (1-based, configuration order). */
  node: number;
  /** False when the node could not be read (down, timed out): then present/token say nothing. */
  known: boolean;
  present: boolean;
  token: string | null;
  /** Remaining TTL in ms; −1 = the key has no expiry; null when absent or unknown. */
  pttlMs: number | null;
  meta: Record<string, string> | null;
}

/** What the masters say, together, about one lock key. */
export interface QuorumView {
  resource: string;
  key: string;
  /** One cell per node read, in node order. */
  cells: LockCell[];
  state: LockState;
  /** The token held by at least a quorum of nodes, or null. */
  majorityToken: string | null;
  /** Nodes holding the majority token; without a majority, nodes holding the most common token. */
  holders: number;
  /** Distinct tokens across the nodes. */
  tokens: number;
  /** ⌊N/2⌋+1 of the configured N. */
  quorum: number;
  /**
   * The validity a client could count on: the quorum-th largest PTTL among the majority-token
   * nodes (the time until fewer than a quorum still hold it) minus the drift allowance
   * (pttl × driftFactor + 2 ms), at least 0. Null without a majority, or when a quorum of the
   * majority's keys have no TTL at all (see `noTtlNodes`).
   */
  validityMs: number | null;
  /** The fencing token from the holder metadata, when there is one. */
  fence: number | null;
  /** Holder metadata of the majority token, from a node whose copy has the fence if any does (else from any holder). */
  meta: Record<string, string> | null;
  /** Nodes whose key has no TTL (PTTL −1): a lock that never expires is an operator problem. */
  noTtlNodes: readonly number[];
  /** Nodes whose key has a PTTL above the lease ceiling (`QuorumOptions.maxTtlMs`). */
  overCeilingNodes: readonly number[];
  /** Nodes that could not be read; a state is computed from the others. */
  unknownNodes: readonly number[];
}

/** How to judge a key: the configured N, the drift factor and the expiring threshold. */
export interface QuorumOptions {
  /** N, the number of configured masters (the quorum is ⌊N/2⌋+1 of these, not of those read). */
  configuredNodes: number;
  /** @default 0.01 */
  driftFactor?: number;
  /** A majority lock with validity at or below this is `expiring`. @default 2000 */
  expiringThresholdMs?: number;
  /**
   * The cluster's lease ceiling (REDLOCK_MAX_TTL_MS): a key whose PTTL is above it was written by
   * a client that does not keep the ceiling (or before the ceiling was lowered), and the
   * quarantine, sized by the ceiling, does not cover it. Unset: not checked.
   */
  maxTtlMs?: number;
}

/** Locks that need a look whatever their state: a key that never expires, a lease above the ceiling. */
export interface FlagCounts {
  noTtl: number;
  overCeiling: number;
}

/** Clock drift allowed per ms of lease: the lock core's default. */
export const DEFAULT_DRIFT_FACTOR = DEFAULT_SETTINGS.driftFactor;
/** A majority lock with this much validity or less is `expiring`. */
export const DEFAULT_EXPIRING_THRESHOLD_MS = 2_000;

/** ⌊N/2⌋+1: the lock core's quorum. */
export { quorumSize };

/** The drift allowance for a lease of `ttlMs` (the lock core's: ttl × driftFactor + 2 ms). */
export function driftAllowanceMs(ttlMs: number, driftFactor: number = DEFAULT_DRIFT_FACTOR): number {
  return driftMs(ttlMs, driftFactor);
}

/** Orders views by resource, then key (plain code-unit order, the same the page cursor uses). */
export function compareLocks(a: { resource: string; key: string }, b: { resource: string; key: string }): number {
  if (a.resource !== b.resource) return a.resource < b.resource ? -1 : 1;
  if (a.key !== b.key) return a.key < b.key ? -1 : 1;
  return 0;
}

/** Classify one key from its cells (any order; the view lists them by node). */
export function quorumView(resource: string, key: string, cells: readonly LockCell[], options: QuorumOptions): QuorumView {
  return classify(resource, key, inNodeOrder(cells) ? cells.slice() : cells.slice().sort((a, b) => a.node - b.node), options);
}

const NO_NODES: readonly number[] = Object.freeze([]);
/** classify()'s PTTLs of the majority, largest first (reused: classify never yields). */
const PTTL_SCRATCH: number[] = [];

/** quorumView on cells already in node order, which the view takes over (no copy). */
export function classify(resource: string, key: string, sorted: LockCell[], options: QuorumOptions): QuorumView {
  const quorum = quorumSize(options.configuredNodes);
  const driftFactor = options.driftFactor ?? DEFAULT_DRIFT_FACTOR;
  const threshold = options.expiringThresholdMs ?? DEFAULT_EXPIRING_THRESHOLD_MS;

  // Distinct tokens and their counts. N is small and most keys have one token: the first token
  // is kept in locals, arrays are made only for a second one.
  let firstToken: string | null = null;
  let firstCount = 0;
  let others: { token: string; count: number }[] | null = null;
  let noTtlNodes: number[] | null = null;
  let overCeilingNodes: number[] | null = null;
  const ceiling = options.maxTtlMs ?? Number.POSITIVE_INFINITY;
  let unknownNodes: number[] | null = null;
  for (const cell of sorted) {
    if (!cell.known) {
      (unknownNodes ??= []).push(cell.node);
      continue;
    }
    const token = cell.token;
    if (!cell.present || token === null) continue;
    if (firstToken === null || token === firstToken) {
      firstToken = token;
      firstCount++;
    } else {
      others ??= [];
      const entry = others.find((o) => o.token === token);
      if (entry) entry.count++;
      else others.push({ token, count: 1 });
    }
    if (cell.pttlMs === -1) (noTtlNodes ??= []).push(cell.node);
    else if (cell.pttlMs !== null && cell.pttlMs > ceiling) (overCeilingNodes ??= []).push(cell.node);
  }

  // The most common token (ties: the smallest token, so the answer never depends on node order).
  let topToken = firstToken;
  let topCount = firstCount;
  for (const { token, count } of others ?? []) {
    if (count > topCount || (count === topCount && topToken !== null && token < topToken)) {
      topToken = token;
      topCount = count;
    }
  }
  const tokens = firstToken === null ? 0 : 1 + (others?.length ?? 0);
  // A held lock whose voter is down (it read `partial`): one token, no other seen, one
  // node short of a quorum with a node that could not be read to make it up, the nodes read a
  // quorum themselves. Such a lock still holds: no other
  // client can reach a quorum around it (the free nodes and the down ones are fewer than a quorum
  // without the down ones, and the down ones do not vote), and its holder's validity stands. It
  // reads `held` (or `expiring`) with `holders` below `quorum` and the down nodes in `unknownNodes`.
  const unknownCount = unknownNodes?.length ?? 0;
  const heldWithDown =
    topCount < quorum &&
    tokens === 1 &&
    topCount >= quorum - 1 &&
    topCount + unknownCount >= quorum &&
    unknownCount <= options.configuredNodes - quorum;
  const majorityToken = topCount >= quorum || heldWithDown ? topToken : null;

  let validityMs: number | null = null;
  let state: LockState;
  if (majorityToken !== null) {
    // The quorum-th largest PTTL among the majority's nodes: until then a quorum still holds it.
    // (An insertion sort into a scratch array: a snapshot classifies 100,000 views, N is small.)
    let count = 0;
    for (const cell of sorted) {
      if (cell.known && cell.present && cell.token === majorityToken) {
        const pttl = cell.pttlMs === null || cell.pttlMs < 0 ? Number.POSITIVE_INFINITY : cell.pttlMs;
        let at = count++;
        while (at > 0 && PTTL_SCRATCH[at - 1]! < pttl) {
          PTTL_SCRATCH[at] = PTTL_SCRATCH[at - 1]!;
          at--;
        }
        PTTL_SCRATCH[at] = pttl;
      }
    }
    // Held with a voter down: the smallest PTTL read (the down nodes' keys are not counted on).
    const lastQuorumPttl = quorum <= count ? PTTL_SCRATCH[quorum - 1]! : count > 0 ? PTTL_SCRATCH[count - 1]! : 0;
    if (Number.isFinite(lastQuorumPttl)) {
      validityMs = Math.max(0, Math.floor(lastQuorumPttl - driftAllowanceMs(lastQuorumPttl, driftFactor)));
    }
    state = validityMs !== null && validityMs <= threshold ? 'expiring' : 'held';
  } else {
    state = tokens >= 2 ? 'split' : 'partial';
  }

  // The majority token's metadata, from the node whose copy carries the highest fence: the fence
  // round writes it only on the nodes that confirmed (a quorum, not every voter), and after a fence
  // proposed with the grant that did not stand (packages/redlock/src/fence-ahead.ts) the other
  // copies name the proposal for a moment, always below the fence issued.
  let meta: Record<string, string> | null = null;
  let majorityMeta = false;
  for (const cell of sorted) {
    if (!cell.known || !cell.present || cell.meta === null) continue;
    if (majorityToken === null || cell.token === majorityToken) {
      if (!majorityMeta || fenceOf(cell.meta) > fenceOf(meta)) meta = cell.meta;
      majorityMeta = true;
      continue;
    }
    if (!majorityMeta) meta ??= cell.meta; // a minority holder's, unless a majority holder's turns up
  }
  const fenceText = meta?.fence;
  const fence = fenceText !== undefined && fenceText !== '' && Number.isFinite(Number(fenceText)) ? Number(fenceText) : null;

  return {
    resource,
    key,
    cells: sorted,
    state,
    majorityToken,
    holders: topCount,
    tokens,
    quorum,
    validityMs,
    fence,
    meta,
    noTtlNodes: noTtlNodes ?? NO_NODES,
    overCeilingNodes: overCeilingNodes ?? NO_NODES,
    unknownNodes: unknownNodes ?? NO_NODES,
  };
}

/** Are the cells in ascending node order? */
export function inNodeOrder(cells: readonly LockCell[]): boolean {
  for (let i = 1; i < cells.length; i++) if (cells[i - 1]!.node > cells[i]!.node) return false;
  return true;
}

/** A copy's fence as a number, −1 when it names none (so that any fence outranks none). */
function fenceOf(meta: Record<string, string> | null): number {
  const n = meta?.fence === undefined || meta.fence === '' ? NaN : Number(meta.fence);
  return Number.isFinite(n) ? n : -1;
}
