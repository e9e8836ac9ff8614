/**
 * Negative controls: scripted scenarios in which a checker MUST find a violation (or it proves
 * nothing), each beside its safe twin, which must show none.
 * - restart: A holds a lock on exactly a majority; one of those nodes restarts without persistence;
 *   B asks for the lock. With `quarantine: false` B gets it while A still holds it (overlap); with
 *   the quarantine on, the restarted node refuses and B does not.
 * - pause: the holder is paused (SIGSTOP) for 2 × ttl mid-hold, B takes the lock over and writes,
 *   then the holder wakes and writes. Unfenced, the register accepts the stale write; fenced, it
 *   refuses it.
 * - targeted (chaos/harness/targeted.ts): the trial of each targeted nemesis with the core's node
 *   checks off (`nodeChecks: false`), where the overlap or the fence regression must be found; the
 *   short-max-ttl trial on a build without the ceiling agreement (the behaviour before it: nothing
 *   else turns it off); the restart-rdb-late trial on a build whose restart quarantine is a quarter
 *   of the ceiling; and evict-flip, the policy switched there and back at run time, which runs here
 *   only (see docs/chaos.md), with its safe twin.
 * - slots (controls-slots.ts): the restart scenario on a semaphore and a read-write lock, where the
 *   capacity and the writer-with-a-reader checkers must find B's grants beside A's, with its safe twin.
 */
import type { ControlOutcome } from './controls-outcome';
import { pauseTrial, restartTrial } from './controls-scripted';
import { slotControls } from './controls-slots';
import { runTargetedControl, TARGETED_CONTROLS } from './controls-targeted';
import type { CoreBuild, RunContext } from './run-context';

export type { ControlOutcome } from './controls-outcome';
export { TARGETED_CONTROLS, type TargetedControl } from './controls-targeted';

function controlSeeds(run: RunContext, seed: number): number[] {
  return Array.from({ length: run.profile.controlSeeds }, (_, i) => seed * 1_000 + i);
}

function logged(run: RunContext, outcomes: ControlOutcome[]): (outcome: ControlOutcome) => void {
  return (outcome) => {
    outcomes.push(outcome);
    run.log(`control ${outcome.name}: ${outcome.passed ? 'passed' : 'FAILED'} (${outcome.found} of ${outcome.trials})`);
  };
}

/** The names of every control, in the order they run. */
export const CONTROL_NAMES: readonly string[] = [
  'restart-no-quarantine',
  'restart-quarantine',
  'pause-holder-unfenced',
  'pause-holder-fenced',
  'slots-no-quarantine',
  'slots-quarantine',
  ...TARGETED_CONTROLS.map((c) => c.name),
];

/**
 * The controls (`only`: these names; default all): the restart and pause ones, then the targeted
 * ones. `buildOf` gives a mutant's build.
 */
export async function runControls(
  run: RunContext,
  core: CoreBuild,
  seed: number,
  buildOf: (mutant: string) => CoreBuild,
  only?: readonly string[],
): Promise<ControlOutcome[]> {
  const outcomes: ControlOutcome[] = [];
  const add = logged(run, outcomes);
  const seeds = controlSeeds(run, seed);
  const wanted = (name: string) => !only || only.includes(name);

  if (wanted('restart-no-quarantine')) {
    const unsafe = { name: 'restart-no-quarantine', negative: true, details: [] as string[], found: 0 };
    for (const s of seeds) {
      const r = await restartTrial(run, core, s, false);
      if (r.overlap) unsafe.found++;
      unsafe.details.push(`${r.overlap ? 'overlap found' : 'NO overlap'}: ${r.detail}`);
    }
    const need = Math.ceil(seeds.length * 0.9);
    add({
      ...unsafe,
      nemesis: 'crash-none-quarantine',
      expectation: `quarantine: false: overlap found in ≥ ${need} of ${seeds.length} seeds`,
      trials: seeds.length,
      passed: unsafe.found >= need,
    });
  }

  if (wanted('restart-quarantine')) {
    const twin = { found: 0, details: [] as string[] };
    for (const s of seeds.slice(0, 3)) {
      const r = await restartTrial(run, core, s, true);
      if (r.overlap) twin.found++;
      twin.details.push(`${r.overlap ? 'OVERLAP' : 'no overlap'}: ${r.detail}`);
    }
    add({
      name: 'restart-quarantine',
      nemesis: 'crash-none-quarantine',
      expectation: 'quarantine on: no overlap in any seed',
      negative: false,
      trials: 3,
      found: twin.found,
      passed: twin.found === 0,
      details: twin.details,
    });
  }

  for (const fenced of [false, true]) {
    if (!wanted(fenced ? 'pause-holder-fenced' : 'pause-holder-unfenced')) continue;
    let stale = 0;
    let refused = 0;
    const trials = 3;
    for (let i = 0; i < trials; i++) {
      const a = await pauseTrial(run, core, i, fenced);
      stale += fenced ? a.fencing.staleAcceptedFenced : a.fencing.staleAcceptedUnfenced;
      refused += a.fencing.rejectedFenced;
    }
    add(
      fenced
        ? {
            name: 'pause-holder-fenced',
            nemesis: 'pause-client',
            expectation: 'fenced: the stale write is refused (0 accepted)',
            negative: false,
            trials,
            found: stale,
            passed: stale === 0 && refused >= trials,
            details: [`${stale} stale writes accepted, ${refused} refused by the fence`],
          }
        : {
            name: 'pause-holder-unfenced',
            nemesis: 'pause-client',
            expectation: 'unfenced: stale writes accepted > 0',
            negative: true,
            trials,
            found: stale,
            passed: stale > 0,
            details: [`${stale} stale writes accepted`],
          },
    );
  }

  for (const outcome of await slotControls(run, core, seeds, 3, wanted)) add(outcome);

  for (const control of TARGETED_CONTROLS) {
    if (!wanted(control.name)) continue;
    const build = control.build ? buildOf(control.build) : core;
    add(await runTargetedControl(run, build, control, seeds.slice(0, control.seeds ?? seeds.length)));
  }
  return outcomes;
}
