/**
 * The targeted controls (chaos/harness/controls.ts): the trial of each targeted nemesis
 * (chaos/harness/targeted.ts) in its unsafe setting, or a safe twin, checked on its own.
 */
import { join } from 'node:path';
import { analyzePhase, type PhaseAnalysis } from './analyze';
import type { ControlOutcome } from './controls-outcome';
import type { ClientEvent, NemesisEvent, RegisterRecord } from './history';
import type { NemesisName } from './nemeses';
import type { EvictionPolicy } from './node-ops';
import { now, readJsonLines, recorder, type CoreBuild, type RunContext } from './run-context';
import { runTrial, TRIAL_DEFENCES, UNARMED_RETRIES, type TrialKind, type TrialResult, type TrialSpec } from './targeted';
import { isLossKind, LOSS_VARIANTS } from './targeted-loss';
import type { ClientSettings } from './worker-protocol';

/** One targeted trial on a fresh register, checked on its own. */
async function checkedTrial(
  run: RunContext,
  core: CoreBuild,
  kind: TrialKind,
  id: string,
  seed: number,
  settings: Partial<ClientSettings>,
  choice: Pick<TrialSpec, 'policy' | 'variant'>,
): Promise<{ result: TrialResult; analysis: PhaseAnalysis }> {
  run.workers.register.reset();
  const nemesis: NemesisEvent[] = [];
  const result = await runTrial(run, { kind, id, core, seed, settings, record: recorder(run, nemesis), ...choice });
  const registerPath = join(run.workDir, `${id}.register.jsonl`);
  await run.workers.register.dump(registerPath);
  const events = result.logs.flatMap((p) => readJsonLines<ClientEvent>(p));
  const analysis = analyzePhase(
    { events, register: readJsonLines<RegisterRecord>(registerPath), nemesis, leakedKeys: [] },
    { toleranceMs: run.profile.trialTtlMs / 2, end: now(run) },
  );
  return { result, analysis };
}

/** A targeted control: the trial of `kind`, `negative` (a violation must be found) or a safe twin. */
export interface TargetedControl {
  name: string;
  nemesis: NemesisName | null;
  kind: TrialKind;
  negative: boolean;
  /** What differs from the safe default, said in the expectation. */
  setting: string;
  settings: Partial<ClientSettings>;
  /** The build the trial runs (a mutant's name), or the real core. */
  build?: string;
  /** Safe twins run fewer seeds than the profile's controlSeeds. */
  seeds?: number;
  /** The trial's variant (targeted-loss.ts), where the kind has two and only one shows the danger. */
  variant?: string;
}

const UNCHECKED = { nodeChecks: false } as const;

export const TARGETED_CONTROLS: readonly TargetedControl[] = [
  {
    name: 'restart-rdb-unchecked',
    nemesis: 'restart-rdb',
    kind: 'restart-rdb',
    negative: true,
    setting: 'nodeChecks: false',
    settings: UNCHECKED,
  },
  {
    name: 'restart-stale-aof-unchecked',
    nemesis: 'restart-stale-aof',
    kind: 'restart-stale-aof',
    negative: true,
    setting: 'nodeChecks: false',
    settings: UNCHECKED,
  },
  {
    name: 'evict-volatile-lru-unchecked',
    nemesis: 'evict-volatile-lru',
    kind: 'evict-volatile-lru',
    negative: true,
    setting: 'nodeChecks: false',
    settings: UNCHECKED,
  },
  {
    name: 'evict-allkeys-random-unchecked',
    nemesis: 'evict-allkeys-random',
    kind: 'evict-allkeys-random',
    negative: true,
    setting: 'nodeChecks: false',
    settings: UNCHECKED,
  },
  { name: 'evict-flip', nemesis: null, kind: 'evict-flip', negative: false, setting: 'checks on', settings: {}, seeds: 4 },
  { name: 'evict-flip-unchecked', nemesis: null, kind: 'evict-flip', negative: true, setting: 'nodeChecks: false', settings: UNCHECKED },
  {
    name: 'lose-data-unquarantined',
    nemesis: 'lose-data',
    kind: 'lose-data',
    negative: true,
    setting: 'quarantine: false',
    settings: { quarantine: false },
  },
  {
    name: 'lose-majority-unquarantined',
    nemesis: 'lose-majority',
    kind: 'lose-majority',
    negative: true,
    setting: 'quarantine: false, fences from the registers (fenceAhead: false)',
    settings: { quarantine: false, fenceAhead: false },
  },
  {
    name: 'fence-stall-single-confirmation',
    nemesis: 'fence-stall',
    kind: 'fence-stall',
    negative: true,
    setting: 'a build whose fence round accepts a single confirmation',
    settings: {},
    build: 'fence-single-confirmation',
  },
  {
    name: 'short-max-ttl-no-agreement',
    nemesis: 'short-max-ttl',
    kind: 'short-max-ttl',
    negative: true,
    setting: 'a build without the ceiling agreement',
    settings: {},
    build: 'ceiling-agreement-ignored',
  },
  {
    name: 'short-max-ttl-unchecked',
    nemesis: 'short-max-ttl',
    kind: 'short-max-ttl',
    negative: false,
    setting: 'nodeChecks: false (the agreement is not behind it)',
    settings: UNCHECKED,
    seeds: 3,
  },
  {
    // The restart quarantine a quarter of the ceiling long: over before B's second ask.
    name: 'restart-rdb-late-short-quarantine',
    nemesis: 'restart-rdb-late',
    kind: 'restart-rdb-late',
    negative: true,
    setting: 'a build whose restart quarantine lasts a quarter of the ceiling',
    settings: {},
    build: 'restart-quarantine-short',
  },
  {
    name: 'rollback-replicaof-unchecked',
    nemesis: 'rollback-replicaof',
    kind: 'rollback-replicaof',
    negative: true,
    setting: 'nodeChecks: false',
    settings: UNCHECKED,
  },
  {
    name: 'rollback-reload-unchecked',
    nemesis: 'rollback-reload',
    kind: 'rollback-reload',
    negative: true,
    setting: 'nodeChecks: false',
    settings: UNCHECKED,
  },
  {
    name: 'rollback-swapdb-unchecked',
    nemesis: 'rollback-swapdb',
    kind: 'rollback-swapdb',
    negative: true,
    setting: 'nodeChecks: false',
    settings: UNCHECKED,
  },
  {
    // A step forward only: a step back lengthens leases, which no checker can see (the phase runs both).
    name: 'clock-jump-unchecked',
    nemesis: 'clock-jump',
    kind: 'clock-jump',
    negative: true,
    setting: 'nodeChecks: false, the clock stepped forward',
    settings: UNCHECKED,
    variant: 'forward',
  },
];

export { UNARMED_RETRIES };

/**
 * Run a control's trial on `seed`; a trial whose danger was not in place proves nothing either way
 * (e.g. evict-flip under allkeys-random: in about 1 % of trials the eviction takes the epoch
 * sentinel before any of A's keys, and the victim is then caught as a data loss, not by the
 * eviction check the control is there to show), so it runs again on another seed, at most
 * UNARMED_RETRIES times, and the report says so. A violation is never retried away: an unarmed
 * trial's analysis is dropped only for a trial that did not violate anything.
 */
export async function armedTrial<T extends { result: Pick<TrialResult, 'armed' | 'detail'>; analysis: Pick<PhaseAnalysis, 'violations'> }>(
  seed: number,
  trial: (seed: number) => Promise<T>,
): Promise<{ value: T; seed: number; unarmed: string[] }> {
  const unarmed: string[] = [];
  for (let k = 0; ; k++) {
    const tried = seed + k * 10_000;
    const value = await trial(tried);
    if (value.result.armed || value.analysis.violations > 0 || k === UNARMED_RETRIES) return { value, seed: tried, unarmed };
    unarmed.push(`seed ${tried}: ${value.result.detail}`);
  }
}

export async function runTargetedControl(
  run: RunContext,
  core: CoreBuild,
  control: TargetedControl,
  seeds: readonly number[],
): Promise<ControlOutcome> {
  const details: string[] = [];
  let found = 0;
  let defended = 0;
  for (const [i, s] of seeds.entries()) {
    // evict-flip alternates its two policies over the seeds.
    const policy: EvictionPolicy | undefined =
      control.kind === 'evict-flip' ? (i % 2 === 0 ? 'volatile-lru' : 'allkeys-random') : undefined;
    const variants = isLossKind(control.kind) ? LOSS_VARIANTS[control.kind] : undefined;
    const variant = control.variant ?? variants?.[i % 2];
    const { value, seed, unarmed } = await armedTrial(s, (seed) =>
      checkedTrial(run, core, control.kind, `ctl-${control.name}-${seed}`, seed, control.settings, {
        ...(policy ? { policy } : {}),
        ...(variant ? { variant } : {}),
      }),
    );
    const { result, analysis } = value;
    const retried = unarmed.length ? `seed ${s}'s danger not in place (${unarmed.join('; ')}), run again on seed ${seed}: ` : '';
    const caught = control.negative ? analysis.overlap.overlaps > 0 || analysis.caughtBy.includes('fencing') : analysis.violations > 0;
    if (caught) found++;
    if (result.defended) defended++;
    const example = [
      ...analysis.overlap.examples.map((e) => `overlap on ${e.resource} for ${e.overlapMs.toFixed(1)} ms`),
      ...analysis.fencing.examples,
      ...analysis.hygiene.examples,
    ][0];
    const what = analysis.caughtBy.length ? `${analysis.caughtBy.join(', ')}: ${example ?? '?'}` : 'nothing';
    details.push(
      control.negative
        ? `${caught ? 'caught' : 'NOT caught'} (${what}${result.armed ? '' : ', danger NOT in place'}): ${retried}seed ${seed}: ${result.detail}`
        : `${caught ? `VIOLATION (${what})` : 'no violation'}, ${result.defended ? 'defended' : 'NOT defended'} (${result.defence ?? 'no defence seen'}): ` +
            `${retried}seed ${seed}: ${result.detail}`,
    );
  }
  const trials = seeds.length;
  const need = Math.ceil(trials * 0.9);
  return control.negative
    ? {
        name: control.name,
        nemesis: control.nemesis,
        negative: true,
        trials,
        found,
        passed: found >= need,
        details,
        expectation: `${control.setting}: overlap or fence regression found in ≥ ${need} of ${trials} seeds`,
      }
    : {
        name: control.name,
        nemesis: control.nemesis,
        negative: false,
        trials,
        found,
        passed: found === 0 && defended === trials,
        details,
        expectation: `${control.setting}: no violation in any seed, and every seed shows that ${TRIAL_DEFENCES[control.kind]}`,
      };
}
