import { SPEEDS, type RunAction, type RunView, type Speed } from '@/lib/api/scenarios';
import { Icon } from './icon';
import type { Act } from './run-control';
import styles from './scenarios.module.css';

/** The run's toolbar: play/pause, step, restart, cancel, the speed, and the keys for them. */
export function RunControls({
  run,
  active,
  canOperate,
  busy,
  act,
}: {
  run: RunView;
  active: boolean;
  canOperate: boolean;
  busy: RunAction | null;
  act: Act;
}) {
  return (
    <div className={styles.controlBar} role="toolbar" aria-label="Run controls">
      <button
        type="button"
        className="button button-primary"
        disabled={!canOperate || !active || busy !== null}
        onClick={() => void act(run.mode === 'play' ? 'pause' : 'play')}
        aria-keyshortcuts="Space"
        data-testid="play-pause"
      >
        {run.mode === 'play' && active ? (
          <>
            <Icon name="pause" /> Pause
          </>
        ) : (
          <>
            <Icon name="play" /> Play
          </>
        )}
      </button>
      <button
        type="button"
        className="button"
        disabled={!canOperate || !active || busy !== null}
        onClick={() => void act('step')}
        aria-keyshortcuts="ArrowRight"
      >
        <Icon name="step" /> Step
      </button>
      <button
        type="button"
        className="button"
        disabled={!canOperate || busy !== null}
        onClick={() => void act('restart')}
        aria-keyshortcuts="r"
        data-testid="restart"
      >
        <Icon name="restart" /> Restart
      </button>
      <button
        type="button"
        className="button"
        disabled={!canOperate || !active || run.status === 'restoring' || busy !== null}
        onClick={() => void act('cancel')}
      >
        <Icon name="stop" /> Cancel
      </button>
      <div className={styles.speed} role="group" aria-label="Speed">
        {SPEEDS.map((s: Speed) => (
          <button
            key={s}
            type="button"
            className={`${styles.speedButton} ${run.speed === s ? styles.speedOn : ''}`}
            aria-pressed={run.speed === s}
            disabled={!canOperate || !active}
            onClick={() => void act('speed', { speed: s })}
          >
            {s}×
          </button>
        ))}
      </div>
      <span className={styles.hint}>
        <kbd>Space</kbd> play/pause · <kbd>→</kbd> step · <kbd>r</kbd> restart · speed scales the pauses between steps, never the TTLs
      </span>
    </div>
  );
}
