import type { VoteReason } from '@redlock-console/redlock/vocabulary';
import type { Outcome, RunView } from '@/lib/api/scenarios';

/** How a run's times, fences, outcomes and vote reasons read on the scenario screens. */

export function fmtSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/** Every fence a run shows: grants, beliefs, writes and the fenced store's highest. */
export function runFences(run: RunView): number[] {
  const t = run.timeline;
  return [
    ...t.attempts.map((a) => a.fence),
    ...t.beliefs.map((b) => b.fence),
    ...t.writes.map((w) => w.fence),
    // The nodes' fence registers too: cut on their own, a register could read lower than the grant it confirmed.
    ...t.fences.map((f) => (f.value === 0 ? null : f.value)),
    run.stores.fenced.highest,
  ].filter((f): f is number => f !== null);
}

/**
 * How a run shows its fences: cut after the digits they all share, so every fence of the run
 * shows the same number of digits and a later fence reads larger ("…12001" after "…08001"); a
 * fixed tail (the last four digits) can make a stale fence look like the newer one. At least four
 * digits are kept; the whole fence is in the titles.
 */
export function fenceFormatter(fences: readonly number[]): (fence: number | null) => string {
  const texts = fences.map(String);
  const length = texts[0]?.length ?? 0;
  // One fence has nothing to be told apart from: its last five digits.
  let shared = texts.length === 1 ? Math.max(0, length - 5) : 0;
  if (texts.length > 1 && texts.every((t) => t.length === length)) {
    while (shared < length && texts.every((t) => t[shared] === texts[0]![shared])) shared++;
  }
  // Fences of different lengths share no digit positions: only whole values keep their order visible.
  const mixed = texts.some((t) => t.length !== length);
  return (fence) => {
    if (fence === null) return 'none';
    const text = String(fence);
    if (mixed) return text;
    const keep = Math.max(4, text.length === length ? length - shared : 5);
    return text.length > keep + 1 ? `…${text.slice(-keep)}` : text;
  };
}

export const OUTCOME_LABEL: Record<Outcome, string> = {
  granted: 'granted',
  LockContendedError: 'LockContended',
  QuorumUnavailableError: 'QuorumUnavailable',
  LockExpiredError: 'LockExpired',
  aborted: 'cancelled',
  error: 'error',
};

export const VOTE_REASON: Record<VoteReason, string> = {
  ok: 'granted',
  contended: 'held by another client',
  quarantined: 'quarantined: sits out after a data loss, a restart, a rollback or a clock jump',
  'unsafe-eviction': 'its memory policy can evict lock keys',
  'ceiling-mismatch': 'records another lease ceiling',
  lost: 'key no longer ours',
  'not-held': 'nothing to delete',
  timeout: 'no answer in time',
  pending: 'not awaited (decided early)',
  error: 'unreachable',
  'not-asked': 'not asked',
};
