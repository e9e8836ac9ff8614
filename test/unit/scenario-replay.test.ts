import { describe, expect, it } from 'vitest';
import type { RunView } from '@/lib/api/scenarios';
import { runAt } from '@/components/scenarios/replay';

type Timeline = RunView['timeline'];

/** A finished run's view, reduced to what a replay reads (the rest of a RunView is passed through). */
function finishedRun(): RunView {
  const timeline: Timeline = {
    now: 5_000,
    nodeStates: [{ node: 1, from: 1_200, to: 2_400, state: 'down', detail: 'crash' }],
    keys: [
      { node: 1, resource: 'r', client: 'A', from: 1_000, to: 1_200, expiresAt: 4_000, open: false },
      { node: 2, resource: 'r', client: 'A', from: 1_000, to: 4_000, expiresAt: 4_000, open: false },
      { node: 2, resource: 'r', client: 'B', from: 4_100, to: 5_000, expiresAt: 8_000, open: true },
    ],
    quarantines: [{ node: 1, from: 2_400, to: 4_400, cause: 'restart', open: false }],
    fences: [],
    markers: [
      { t: 1_200, node: 1, client: null, kind: 'crash', label: 'crash' },
      { t: 3_000, node: null, client: 'A', kind: 'write', label: 'A writes' },
    ],
    beliefs: [
      { client: 'A', resource: 'r', from: 1_000, validUntil: 3_900, to: 4_600, fence: 1, stale: true, ended: 'released' },
      { client: 'B', resource: 'r', from: 4_200, validUntil: 7_900, to: null, fence: 2, stale: false, ended: 'open' },
    ],
    attempts: [
      {
        id: 'a',
        client: 'A',
        resource: 'r',
        from: 900,
        to: 1_000,
        outcome: 'granted',
        votes: [],
        validityMs: 2_900,
        fence: 1,
        tries: 1,
        message: null,
      },
      {
        id: 'b',
        client: 'B',
        resource: 'r',
        from: 3_500,
        to: 4_200,
        outcome: 'granted',
        votes: [],
        validityMs: 3_700,
        fence: 2,
        tries: 5,
        message: null,
      },
    ],
    writes: [
      { t: 3_000, client: 'A', resource: 'r', fence: 1, value: 'A', unfenced: 'accepted', fenced: 'accepted', reason: 'first fence seen' },
    ],
  };
  return {
    timeline,
    resources: [{ name: 'r', description: 'the resource' }],
    checker: { ok: false, resources: [] },
  } as unknown as RunView;
}

describe('replaying a finished run', () => {
  it('shows what had begun by then, cut at that moment, with what was still going on left open', () => {
    const at = runAt(finishedRun(), 2_000).timeline;
    expect(at.now).toBe(2_000);
    expect(at.nodeStates).toEqual([{ node: 1, from: 1_200, to: null, state: 'down', detail: 'crash' }]);
    expect(at.keys).toEqual([
      { node: 1, resource: 'r', client: 'A', from: 1_000, to: 1_200, expiresAt: 4_000, open: false },
      { node: 2, resource: 'r', client: 'A', from: 1_000, to: 2_000, expiresAt: 4_000, open: true },
    ]);
    expect(at.quarantines).toEqual([]);
    expect(at.markers.map((m) => m.kind)).toEqual(['crash']);
    expect(at.beliefs).toEqual([
      { client: 'A', resource: 'r', from: 1_000, validUntil: 3_900, to: null, fence: 1, stale: false, ended: 'open' },
    ]);
    expect(at.attempts.map((a) => a.id)).toEqual(['a']);
    expect(at.writes).toEqual([]);
  });

  it('an attempt still waiting for its answer has none yet; the checker is recomputed for that moment', () => {
    const before = runAt(finishedRun(), 3_800);
    expect(before.timeline.attempts[1]).toMatchObject({ id: 'b', to: null, outcome: null, fence: null });
    expect(before.checker.ok).toBe(true);
    const during = runAt(finishedRun(), 4_400);
    expect(during.timeline.beliefs.map((b) => [b.client, b.to, b.stale])).toEqual([
      ['A', null, true],
      ['B', null, false],
    ]);
    expect(during.checker.ok).toBe(false);
    expect(during.checker.resources[0]!.overlaps[0]).toMatchObject({
      clients: ['A', 'B'],
      from: 4_200,
      to: 4_400,
      open: true,
      bothValid: false,
    });
    expect(during.timeline.quarantines).toEqual([{ node: 1, from: 2_400, to: 4_400, cause: 'restart', open: false }]);
    // At the end, the run as it finished.
    const end = runAt(finishedRun(), 5_000).timeline;
    expect(end.keys).toEqual(finishedRun().timeline.keys);
    expect(end.beliefs[0]).toMatchObject({ to: 4_600, ended: 'released' });
  });
});
