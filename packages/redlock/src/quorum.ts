/**
 * Pure Redlock arithmetic: quorum size, clock drift, validity and jittered retry delays. No I/O, so
 * it is property-tested exhaustively (test/unit/redlock-quorum.test.ts).
 */

/** ⌊N/2⌋+1 of the configured N: any two such sets of nodes intersect. */
export function quorumSize(nodeCount: number): number {
  return Math.floor(nodeCount / 2) + 1;
}

/**
 * The smallest number of nodes whose keys, held by others, make a quorum impossible for anyone
 * else: N − quorum + 1.
 */
export function blockingSize(nodeCount: number): number {
  return nodeCount - quorumSize(nodeCount) + 1;
}

/** Allowance for clock drift between processes: ttl × driftFactor + 2 ms (Redlock's choice). */
export function driftMs(ttlMs: number, driftFactor: number): number {
  return ttlMs * driftFactor + 2;
}

/**
 * What is left of a lease after an acquire (or extend) that took `elapsedMs` on the monotonic
 * clock: ttl − elapsed − drift. ≤ 0 means the attempt failed: by the time the client knows it holds
 * a quorum, the first key it set may already be gone.
 */
export function validityMs(ttlMs: number, elapsedMs: number, driftFactor: number): number {
  return ttlMs - elapsedMs - driftMs(ttlMs, driftFactor);
}

/** The elapsed time after which validityMs is ≤ 0: no success is possible past it. */
export function validityHorizonMs(ttlMs: number, driftFactor: number): number {
  return ttlMs - driftMs(ttlMs, driftFactor);
}

/**
 * A retry delay uniformly drawn from [max(0, delay − jitter), delay + jitter], so clients that
 * failed together do not retry together (the split-vote livelock the Redlock page warns about).
 * `random` returns a number in [0, 1).
 */
export function jitteredDelayMs(delayMs: number, jitterMs: number, random: () => number = Math.random): number {
  const low = Math.max(0, delayMs - jitterMs);
  const high = delayMs + jitterMs;
  const r = random();
  const unit = r >= 0 && r < 1 ? r : 0;
  return Math.min(high, low + Math.floor(unit * (high - low + 1)));
}
