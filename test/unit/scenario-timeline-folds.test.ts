import { describe, expect, it } from 'vitest';
import type { RunView } from '@/lib/api/scenarios';
import { foldsOf, layoutTimeline, runTime } from '@/components/scenarios/timeline-layout';

/**
 * Time spent on a prediction stretched the timeline (a run squeezed into the last 3 s of
 * a 95.7 s axis). The axis is the run's own time now: the waits for an answer are folded out.
 */
const step = (kind: string, startedAt: number | null, endedAt: number | null) => ({ kind, startedAt, endedAt });

/** A run of 8.5 s of its own, with two predictions answered after 40 s and 47.2 s. */
function slowlyAnswered(): RunView {
  return {
    steps: [
      step('mark-clean', 0, 300),
      step('predict', 1_000, 41_000),
      step('acquire', 41_100, 41_400),
      step('predict', 43_000, 90_200),
      step('release', 90_300, 90_500),
    ],
    nodes: [{ id: 1, label: '127.0.0.1:1' }],
    clients: [{ name: 'A', description: '', unsafe: false, unsafeSetting: null }],
    timeline: { now: 95_700, nodeStates: [], keys: [], quarantines: [], fences: [], markers: [], beliefs: [], attempts: [], writes: [] },
    checker: { ok: true, resources: [] },
    resources: [{ name: 'r', description: '' }],
  } as unknown as RunView;
}

describe("the timeline is drawn on the run's own time", () => {
  it('folds every wait for a prediction out: a moment inside a wait is its start', () => {
    const folds = foldsOf(slowlyAnswered(), 95_700);
    expect(folds).toEqual([
      { from: 1_000, to: 41_000 },
      { from: 43_000, to: 90_200 },
    ]);
    expect(runTime(500, folds)).toBe(500);
    expect(runTime(20_000, folds)).toBe(1_000);
    expect(runTime(41_100, folds)).toBe(1_100);
    expect(runTime(95_700, folds)).toBe(95_700 - 40_000 - 47_200);
  });

  it('a wait still open folds up to now, and the axis spans the run time, not the wall time', () => {
    const run = slowlyAnswered();
    run.steps[3]!.endedAt = null;
    expect(foldsOf(run, 60_000)).toEqual([
      { from: 1_000, to: 41_000 },
      { from: 43_000, to: 60_000 },
    ]);
    const final = layoutTimeline(slowlyAnswered(), 95_700, false);
    expect(final.span).toBe(9_000);
    expect(final.ticks.at(-1)).toBe(9_000);
  });
});
