/**
 * Liveness as a verdict. A nemesis that keeps a quorum reachable for every client the whole time
 * (NEMESES[n].keepsQuorum) leaves the core no reason to fail an acquire for unavailability, and no
 * reason to slow down to a crawl:
 * - QuorumUnavailableError: at most UNAVAILABLE_SHARE of its acquires (at least UNAVAILABLE_MIN, for a
 *   loaded box's stray timeout), where the core's contract says 0: 0.2 % when a node is to spare,
 *   1 % when each client has a bare quorum (one node answering after the 100 ms node timeout on a
 *   loaded box is then enough to fail an attempt);
 * - throughput: successful acquisitions per second at least THROUGHPUT_FLOOR of the no-fault phase's
 *   in the same run (no floor when that phase did not run). A core that storms or leaves keys behind
 *   collapses by far more (the no-cleanup build: ~20×); the slowest healthy phases keep about half.
 * Other classes are not counted: contention (LockContendedError) is the workload's own, and an
 * acquire a client's own stop outlived (LockExpiredError) is the validity rule at work.
 */
import type { NemesisReport } from '../../lib/api/chaos-report';

/** Allowed share of QuorumUnavailableErrors: a quorum with a node to spare / a bare quorum (one slow node away from none). */
export const UNAVAILABLE_SHARE = { spare: 0.002, bare: 0.01 } as const;
export const UNAVAILABLE_MIN = 2;
export const THROUGHPUT_FLOOR = 0.2;

export type Liveness = NonNullable<NemesisReport['liveness']>;

/** The liveness verdict of one phase (`baselinePerS`: the no-fault phase's rate, if it ran). */
export function judgeLiveness(
  n: Pick<NemesisReport, 'successes' | 'failures' | 'failuresByClass' | 'durationMs'>,
  baselinePerS: number | null,
  quorum: keyof typeof UNAVAILABLE_SHARE = 'spare',
): Liveness {
  const unavailable = n.failuresByClass.QuorumUnavailableError ?? 0;
  const allowedUnavailable = Math.max(UNAVAILABLE_MIN, Math.floor(UNAVAILABLE_SHARE[quorum] * (n.successes + n.failures)));
  const ratePerS = n.durationMs > 0 ? n.successes / (n.durationMs / 1000) : 0;
  const floorPerS = baselinePerS === null ? null : THROUGHPUT_FLOOR * baselinePerS;
  return {
    unavailable,
    allowedUnavailable,
    ratePerS,
    floorPerS,
    passed: unavailable <= allowedUnavailable && (floorPerS === null || ratePerS >= floorPerS),
  };
}

/** Why a liveness verdict failed, for the run's failures. */
export function livenessFailure(nemesis: string, l: Liveness): string {
  const parts: string[] = [];
  if (l.unavailable > l.allowedUnavailable)
    parts.push(`${l.unavailable} QuorumUnavailableError(s) (at most ${l.allowedUnavailable}) although a quorum was reachable`);
  if (l.floorPerS !== null && l.ratePerS < l.floorPerS) {
    parts.push(
      `${l.ratePerS.toFixed(0)} acquisitions/s, under the floor of ${l.floorPerS.toFixed(0)} (${THROUGHPUT_FLOOR * 100} % of the no-fault phase's)`,
    );
  }
  return `${nemesis}: liveness: ${parts.join('; ')}`;
}
