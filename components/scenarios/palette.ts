import type { VoteReason } from '@redlock-console/redlock/vocabulary';
import type { Outcome } from '@/lib/api/scenarios';
/** Client colours: one hue per client name, the same lightness in both themes (white text reads on all). */
const HUES: Record<string, number> = { A: 255, B: 330, C: 175, D: 295, E: 60, P: 230 };

export function clientColor(name: string): string {
  if (name === 'P') return 'oklch(0.62 0.05 230)';
  const hue = HUES[name];
  return hue === undefined ? 'oklch(0.6 0 0)' : `oklch(0.6 0.17 ${hue})`;
}

/** A lighter tint of the client colour (for fuses and backgrounds). */
export function clientTint(name: string, percent = 30): string {
  return `color-mix(in oklab, ${clientColor(name)} ${percent}%, transparent)`;
}

export function fmtSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

export function shortFence(fence: number | null): string {
  if (fence === null) return 'none';
  const s = String(fence);
  return s.length > 5 ? `…${s.slice(-4)}` : s;
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
  quarantined: 'quarantined: sits out after a data loss or a restart',
  'unsafe-eviction': 'its memory policy can evict lock keys',
  'ceiling-mismatch': 'records another lease ceiling',
  lost: 'key no longer ours',
  'not-held': 'nothing to delete',
  timeout: 'no answer in time',
  pending: 'not awaited (decided early)',
  error: 'unreachable',
  'not-asked': 'not asked',
};
