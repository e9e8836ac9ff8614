import { describe, expect, it } from 'vitest';
import type { StepView } from '@/lib/api/scenarios';
import { beatView } from '@/components/scenarios/beat';
import { createPrng, SCENARIOS } from '@/lib/scenarios';

const step = (index: number, id: string, over: Partial<StepView> = {}): StepView => ({
  index,
  id,
  kind: 'node',
  title: `title ${id}`,
  say: `say ${id}`,
  chained: true,
  status: 'done',
  startedAt: null,
  endedAt: null,
  result: null,
  ...over,
});

describe('the beat the scenario player shows', () => {
  const steps = [
    step(0, 'clean', { chained: false }),
    step(1, 'p-off', { kind: 'predict', chained: false, say: 'Phase 1: set the scene.' }),
    step(2, 'crash', { say: 'Node 3 crashes…' }),
    step(3, 'restart', { say: '…and restarts empty.', status: 'active' }),
    step(4, 'asks', { status: 'pending' }),
    step(5, 'release', { chained: false, status: 'pending' }),
  ];

  it("every chained step's narration is on screen with its beat, not only the opening step's", () => {
    const beat = beatView(steps, 3);
    expect(beat.opening).toBe('Phase 1: set the scene.');
    expect(beat.lines.map((l) => [l.id, l.say, l.status])).toEqual([
      ['crash', 'Node 3 crashes…', 'done'],
      ['restart', '…and restarts empty.', 'active'],
    ]);
  });

  it('a step that opens a beat says its narration once, as the opening; steps not reached yet are not shown', () => {
    expect(beatView(steps, 0)).toEqual({
      opening: 'say clean',
      lines: [{ id: 'clean', title: 'title clean', say: null, status: 'done', result: null }],
    });
    expect(beatView(steps, 5).lines.map((l) => l.id)).toEqual(['release']);
    expect(beatView([], 0)).toEqual({ opening: null, lines: [] });
  });

  it("in every scenario, each chained step's narration reaches the beat as it runs", () => {
    for (const scenario of SCENARIOS) {
      const script = scenario.build(createPrng(1));
      const views: StepView[] = script.steps.map((s, index) => step(index, s.id, { kind: s.do, say: s.say, chained: !!s.chain }));
      views.forEach((s, i) => {
        if (!s.chained || s.kind === 'predict') return;
        const beat = beatView(views, i);
        expect(beat.lines.find((l) => l.id === s.id)?.say, `${scenario.id}: ${s.id}`).toBe(s.say);
      });
    }
  });
});
