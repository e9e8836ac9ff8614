import type { StepView } from '@/lib/api/scenarios';

/** One step of the beat on screen: its narration as well as its title and result. */
export interface BeatLine {
  id: string;
  title: string;
  /** The step's narration; null when it is already the beat's opening paragraph. */
  say: string | null;
  status: StepView['status'];
  result: string | null;
}

export interface BeatView {
  /** The paragraph that opens the beat: what its first step says. */
  opening: string | null;
  /** Every step of the beat run or running so far, predictions left out (they have their own prompt). */
  lines: BeatLine[];
}

/**
 * The beat the player shows: the step that opened it (not chained) and every step chained to it up
 * to the current one. Chained steps run without a pause, so what each of them says has to stay on
 * screen with the rest of its beat, not only the opening step's narration.
 */
export function beatView(steps: readonly StepView[], stepIndex: number): BeatView {
  if (steps.length === 0) return { opening: null, lines: [] };
  const current = Math.max(0, Math.min(stepIndex, steps.length - 1));
  let lead = current;
  while (lead > 0 && steps[lead]!.chained) lead--;
  const opening = steps[lead]!.say;
  const lines = steps
    .slice(lead, current + 1)
    .map((s, i) => ({ step: s, opens: i === 0 }))
    .filter(({ step }) => step.kind !== 'predict')
    .map(({ step, opens }) => ({
      id: step.id,
      title: step.title,
      say: opens ? null : step.say,
      status: step.status,
      result: step.result,
    }));
  return { opening, lines };
}
