import type { RunView } from '@/lib/api/scenarios';
import { checkMutualExclusion } from '@/lib/scenarios/checker';

/**
 * A finished run's timeline as it stood at run time `t`: what had begun by then, cut at `t`, and
 * what was still going on left open (a key with its TTL still to run, a belief, an attempt with no
 * answer yet); the checker recomputed over those beliefs. Only the timeline and the checker change:
 * the rest of the view is the run's. Lets a viewer replay a burst of chained steps after the fact.
 */
export function runAt(run: RunView, t: number): RunView {
  const tl = run.timeline;
  const beliefs = tl.beliefs
    .filter((b) => b.from <= t)
    .map((b) => (b.to === null || b.to > t ? { ...b, to: null, ended: 'open' as const, stale: b.stale && t > b.validUntil } : b));
  return {
    ...run,
    timeline: {
      ...tl,
      now: t,
      nodeStates: tl.nodeStates.filter((s) => s.from <= t).map((s) => (s.to === null || s.to > t ? { ...s, to: null } : s)),
      keys: tl.keys.filter((k) => k.from <= t).map((k) => (k.to > t ? { ...k, to: t, open: true } : k)),
      quarantines: tl.quarantines.filter((q) => q.from <= t).map((q) => (q.to > t ? { ...q, to: t, open: true } : q)),
      fences: tl.fences.filter((f) => f.at <= t),
      markers: tl.markers.filter((m) => m.t <= t),
      beliefs,
      attempts: tl.attempts
        .filter((a) => a.from <= t)
        .map((a) =>
          a.to === null || a.to > t ? { ...a, to: null, outcome: null, votes: [], validityMs: null, fence: null, message: null } : a,
        ),
      writes: tl.writes.filter((w) => w.t <= t),
    },
    checker: checkMutualExclusion(
      beliefs,
      t,
      run.resources.map((r) => r.name),
      Object.fromEntries(run.resources.flatMap((r) => (r.limit === undefined ? [] : [[r.name, r.limit]]))),
    ),
  };
}
