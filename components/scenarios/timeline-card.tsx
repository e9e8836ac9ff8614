'use client';

import { Fragment, useEffect, useState } from 'react';
import { ACTIVE_STATUSES, type RunView } from '@/lib/api/scenarios';
import { fmtSeconds } from './format';
import { ReplayControls, useReplay } from './replay-controls';
import { runAt } from './replay';
import { Timeline } from './timeline';
import { foldsOf, runTime, spanFor } from './timeline-layout';
import styles from './scenarios.module.css';

/** Where the run's clock stands now: the last answer's time, moved on smoothly (~30 fps) while it runs. */
function useLiveNow(run: RunView, receivedAt: number, live: boolean): number {
  const [tick, setTick] = useState(() => Date.now());
  useEffect(() => {
    if (!live) return;
    let frame = 0;
    let last = 0;
    const loop = (ts: number) => {
      if (ts - last >= 33) {
        last = ts;
        setTick(Date.now());
      }
      frame = requestAnimationFrame(loop);
    };
    frame = requestAnimationFrame(loop);
    return () => cancelAnimationFrame(frame);
  }, [live]);
  if (!live) return run.timeline.now;
  return run.timeline.now + Math.min(1_000, Math.max(0, tick - receivedAt));
}

/** What the timeline's marks mean: a swatch (or two) and its words, a line each. */
const LEGEND: ReadonlyArray<ReadonlyArray<readonly [swatch: string | undefined, words: string]>> = [
  [[styles.legendKey, 'key on a node']],
  [[styles.legendFuse, 'TTL still to run']],
  [[styles.legendHatch, 'node down']],
  [[styles.legendQuarantine, 'node quarantined']],
  [[styles.legendFence, 'fence register changed']],
  [[styles.legendPause, 'client paused']],
  [[styles.legendStale, 'believes past validity']],
  [
    [styles.legendDotOk, 'granted'],
    [styles.legendDotBad, 'refused'],
  ],
  [[styles.legendOverlap, 'overlap']],
];

function TimelineLegend() {
  return (
    <span className={styles.legend}>
      {LEGEND.map((line) => (
        <span key={line[0]![1]}>
          {line.map(([swatch, words], i) => (
            <Fragment key={words}>
              {i > 0 ? ' ' : null}
              <i className={swatch} /> {words}
            </Fragment>
          ))}
        </span>
      ))}
    </span>
  );
}

/** The timeline card: the only part of the player that re-renders every frame. Once the run is over, it can be replayed. */
export function TimelineCard({ run, receivedAt, live }: { run: RunView; receivedAt: number; live: boolean }) {
  const liveNow = useLiveNow(run, receivedAt, live);
  const finished = !ACTIVE_STATUSES.includes(run.status);
  const end = run.timeline.now;
  const replay = useReplay(end, finished);
  const now = replay.at ?? liveNow;
  const shown = replay.at === null ? run : runAt(run, replay.at);
  // The run's own time: the waits for a prediction's answer are folded out of the clock and the axis.
  const folds = foldsOf(run, now);
  const runNow = runTime(now, folds);
  const waited = now - runNow;
  return (
    <section className={styles.timelineCard} aria-labelledby="timeline-title">
      <div className={styles.panelHead}>
        <h2 id="timeline-title">
          Timeline{' '}
          <span className="muted small" data-testid="timeline-clock">
            {fmtSeconds(runNow)}
            {waited >= 100 ? ` of run time · ${fmtSeconds(waited)} on predictions, folded out` : ''}
          </span>
        </h2>
        <TimelineLegend />
      </div>
      {finished && end > 0 && <ReplayControls replay={replay} end={end} />}
      <Timeline run={shown} now={now} live={live} spanMs={finished ? spanFor(runTime(end, foldsOf(run, end)), false) : undefined} />
    </section>
  );
}
