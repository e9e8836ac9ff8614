'use client';

import type { HolderLivenessView } from '@/lib/api/locks';
import { formatDuration } from '../ui/format';
import styles from './holder-pulse.module.css';

/** "3.2 s" under ten seconds (a holder's pace is read in seconds), else "1m 30s"; "?" when unknown. */
export function paceText(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms)) return '?';
  return ms < 10_000 ? `${(Math.max(0, ms) / 1000).toFixed(1)} s` : formatDuration(ms);
}

/** The one line saying whether the holder is alive, as its keys tell (lib/inspect/holder-liveness.ts). */
export function pulseHeadline(l: HolderLivenessView): string {
  switch (l.pulse) {
    case 'alive':
      return `Alive: extended ${paceText(l.sinceLastMs)} ago, every ~${paceText(l.everyMs)} (${l.extensions} extension${l.extensions === 1 ? '' : 's'})`;
    case 'stopped':
      return `Stopped extending: last extended ${paceText(l.sinceLastMs)} ago, where it used to every ~${paceText(l.everyMs)}`;
    case 'never-extended':
      return `Never extended: granted ${paceText(l.sinceLastMs)} ago, its lease runs out in ${paceText(l.learnsWithinMs)}`;
    case 'unknown':
      // (A key may carry an owner and a host and still not its lease and grant time: not "no metadata".)
      return 'Liveness unknown: the key does not say when it was granted or last extended (another library, or written by hand)';
  }
}

/**
 * The holder's liveness before a force-release: how recently and how often it extends,
 * and what that means — a live holder goes on as if it held the lock until its next extend or
 * check, so for a while two holders may act. For a live holder the dialog asks for the extra
 * confirmation (`confirm`); the API refuses without it.
 */
export function HolderPulse({
  liveness,
  confirmed,
  onConfirm,
  disabled,
}: {
  liveness: HolderLivenessView;
  confirmed: boolean;
  onConfirm: (confirmed: boolean) => void;
  disabled: boolean;
}) {
  const alive = liveness.pulse === 'alive';
  return (
    <div
      className={`${styles.pulse} ${alive ? styles.alive : liveness.pulse === 'stopped' ? styles.stopped : styles.quiet}`}
      data-testid="holder-pulse"
      data-pulse={liveness.pulse}
      role={alive ? 'alert' : undefined}
    >
      <p className={styles.headline}>
        <span className={styles.dot} aria-hidden="true" />
        <strong>{pulseHeadline(liveness)}</strong>
      </p>
      {alive && (
        <>
          <p className={styles.explain} data-testid="holder-pulse-explain">
            The holder learns it lost the lock only at its next extend or check — about {paceText(liveness.learnsWithinMs)} from the read.
            Until then it goes on as if it held it, while another client may take it: two holders at once. Prefer stopping the holder;
            release it only if it is stuck.
          </p>
          <label className={styles.confirm}>
            <input
              type="checkbox"
              checked={confirmed}
              onChange={(e) => onConfirm(e.target.checked)}
              disabled={disabled}
              data-testid="confirm-live-holder"
            />
            The holder is alive and I release it anyway
          </label>
        </>
      )}
    </div>
  );
}
