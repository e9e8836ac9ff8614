'use client';

import { useEffect, useRef, useState } from 'react';
import { fmtSeconds } from './format';
import { Icon } from './icon';
import styles from './scenarios.module.css';

const REPLAY_STEP_MS = 50;

/**
 * Replaying a finished run: where the replay stands (null: the whole run), and a play button that
 * runs it again at real speed.
 */
export function useReplay(end: number, enabled: boolean) {
  const [at, setAt] = useState<number | null>(null);
  const [playing, setPlaying] = useState(false);
  const startedRef = useRef<{ wall: number; from: number } | null>(null);
  useEffect(() => {
    if (!playing) return;
    let frame = 0;
    const loop = (ts: number) => {
      startedRef.current ??= { wall: ts, from: 0 };
      const t = startedRef.current.from + (ts - startedRef.current.wall);
      if (t >= end) {
        setAt(null);
        setPlaying(false);
        return;
      }
      setAt(t);
      frame = requestAnimationFrame(loop);
    };
    frame = requestAnimationFrame(loop);
    return () => cancelAnimationFrame(frame);
  }, [playing, end]);
  const play = (from: number) => {
    startedRef.current = null;
    startedRef.current = { wall: performance.now(), from };
    setAt(from);
    setPlaying(true);
  };
  return {
    at: enabled ? at : null,
    playing: enabled && playing,
    seek: (t: number) => {
      setPlaying(false);
      // The slider moves in steps of REPLAY_STEP_MS: its last step short of the end is the end.
      setAt(t > end - REPLAY_STEP_MS ? null : t);
    },
    play,
    stop: () => {
      setPlaying(false);
      setAt(null);
    },
  };
}

export type Replay = ReturnType<typeof useReplay>;

/** A finished run's replay: play or stop it, and a slider to any moment of the run. */
export function ReplayControls({ replay, end }: { replay: Replay; end: number }) {
  return (
    <div className={styles.replay} data-testid="replay">
      <button
        type="button"
        className="button small"
        onClick={() => (replay.playing ? replay.stop() : replay.play(replay.at !== null && replay.at < end - 50 ? replay.at : 0))}
        data-testid="replay-play"
      >
        {replay.playing ? (
          <>
            <Icon name="stop" /> Stop replay
          </>
        ) : (
          <>
            <Icon name="play" /> Replay
          </>
        )}
      </button>
      <label className={styles.replayLabel}>
        <span>Replay the run</span>
        <input
          type="range"
          min={0}
          max={Math.round(end)}
          step={REPLAY_STEP_MS}
          value={Math.round(replay.at ?? end)}
          onChange={(e) => replay.seek(Number(e.target.value))}
          aria-valuetext={`${fmtSeconds(replay.at ?? end)} of ${fmtSeconds(end)}`}
          data-testid="replay-scrubber"
        />
      </label>
      <span className="muted small" data-testid="replay-at" data-value={Math.round(replay.at ?? end)}>
        {fmtSeconds(replay.at ?? end)} / {fmtSeconds(end)}
      </span>
    </div>
  );
}
