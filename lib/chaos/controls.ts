/**
 * Negative controls: scripted scenarios in which a checker MUST find a violation (or it proves
 * nothing), each beside its safe twin, which must show none.
 * - restart: A holds a lock on exactly a majority; one of those nodes restarts without persistence;
 *   B asks for the lock. With `quarantine: false` B gets it while A still holds it (overlap); with
 *   the quarantine on, the restarted node refuses and B does not.
 * - pause: the holder is paused (SIGSTOP) for 2 × ttl mid-hold, B takes the lock over and writes,
 *   then the holder wakes and writes. Unfenced, the register accepts the stale write; fenced, it
 *   refuses it.
 * - targeted (lib/chaos/targeted.ts): the trial of each targeted nemesis with the core's node
 *   checks off (`nodeChecks: false`), where the overlap or the fence regression must be found; the
 *   short-max-ttl trial on a build without the ceiling agreement (the behaviour before it: nothing
 *   else turns it off); and evict-flip, the policy switched there and back at run time, which
 *   runs here only (see docs/chaos.md), with its safe twin.
 */
import { join } from 'node:path';
import { analyzePhase, type PhaseAnalysis } from './analyze';
import type { ClientEvent, NemesisEvent, RegisterRecord } from './history';
import type { NemesisName } from './nemeses';
import type { EvictionPolicy } from './node-ops';
import { Rng } from './random';
import { clientSettings, markPrefixClean, now, readJsonLines, recorder, type CoreBuild, type RunContext } from './run-context';
import { runTrial, TRIAL_DEFENCES, type TrialKind, type TrialResult } from './targeted';
import type { ClientSettings } from './worker-protocol';
import type { ClientWorker } from './workers';

export interface ControlOutcome {
  name: string;
  /** The nemesis whose situation this control reproduces (null: none). */
  nemesis: NemesisName | null;
  /** What must happen for the control to pass. */
  expectation: string;
  /** True for a negative control (a violation must be found), false for its safe twin. */
  negative: boolean;
  trials: number;
  /** Trials in which the checker found the violation (negative) / found any violation (safe twin). */
  found: number;
  passed: boolean;
  details: string[];
}

interface Granted {
  granted: boolean;
  fence?: number | null;
  votes?: string;
  error?: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Run one scripted trial with clients A and B on a fresh prefix, then check its history. */
async function trial(
  run: RunContext,
  id: string,
  settings: ClientSettings,
  core: CoreBuild,
  urls: string[],
  script: (a: ClientWorker, b: ClientWorker, nemesis: NemesisEvent[]) => Promise<void>,
): Promise<PhaseAnalysis> {
  const [a, b] = run.workers.clients;
  if (!a || !b) throw new Error('controls need two client processes');
  await markPrefixClean(run, settings.keyPrefix, settings.maxTtlMs);
  run.workers.register.reset();
  const logs = [a, b].map((c) => join(run.workDir, `${id}.client-${c.index}.jsonl`));
  const nemesis: NemesisEvent[] = [];
  await a.rpc({
    op: 'open',
    corePath: core.indexPath,
    urls,
    settings,
    registerPort: run.workers.register.port,
    logPath: logs[0]!,
    tag: id,
  });
  await b.rpc({
    op: 'open',
    corePath: core.indexPath,
    urls,
    settings,
    registerPort: run.workers.register.port,
    logPath: logs[1]!,
    tag: id,
  });
  try {
    await script(a, b, nemesis);
  } finally {
    a.resume();
    await Promise.all([a.rpc({ op: 'close' }), b.rpc({ op: 'close' })]);
  }
  const registerPath = join(run.workDir, `${id}.register.jsonl`);
  await run.workers.register.dump(registerPath);
  const events = logs.flatMap((p) => readJsonLines<ClientEvent>(p));
  return analyzePhase(
    { events, register: readJsonLines<RegisterRecord>(registerPath), nemesis, leakedKeys: [] },
    { toleranceMs: settings.maxTtlMs / 2, end: now(run) },
  );
}

/** The seeds' restart scenario, timed so that the restarted node is in the holder's majority. */
async function restartTrial(
  run: RunContext,
  core: CoreBuild,
  seed: number,
  quarantine: boolean,
): Promise<{ overlap: boolean; detail: string }> {
  const { supervisor } = run;
  const ttl = run.profile.controlTtlMs;
  const rng = new Rng(seed);
  const order = rng.sample([0, 1, 2, 3, 4], 5);
  const majority = order.slice(0, 3);
  const others = order.slice(3);
  const restarted = rng.pick(majority);
  const id = `ctl-restart-${quarantine ? 'q' : 'noq'}-${seed}`;
  const settings = clientSettings(run, `chaos:${run.runId}:${id}:`, { maxTtlMs: ttl, quarantine, retryDelayMs: 20, retryJitterMs: 10 });
  let detail = '';
  const analysis = await trial(run, id, settings, core, supervisor.urls(), async (a, b, nemesis) => {
    // A reaches only the majority: its SETs to the others wait in the blackholed proxies, which
    // then reset those connections (as a real partition eventually does), so A holds exactly the majority.
    for (const n of others) await supervisor.partition(n + 1);
    const lockA = (await a.rpc({ op: 'acquire', resource: 'f:ctl', ttlMs: ttl, fenced: true, retryCount: 0 })) as Granted;
    for (const n of others) await supervisor.act(n + 1, { action: 'reset' });
    for (const n of others) await supervisor.heal(n + 1);
    if (!lockA.granted) {
      detail = `seed ${seed}: A was not granted (${lockA.error ?? '?'})`;
      return;
    }
    await supervisor.crash(restarted + 1);
    nemesis.push({ t: now(run), kind: 'data-loss', node: restarted });
    await supervisor.start(restarted + 1, 'none');
    const lockB = (await b.rpc({ op: 'acquire', resource: 'f:ctl', ttlMs: ttl, fenced: true, retryCount: 25 })) as Granted;
    detail =
      `seed ${seed}: A held nodes ${majority.map((n) => n + 1).join(',')} (votes ${lockA.votes}), node ${restarted + 1} restarted empty; ` +
      (lockB.granted ? `B granted (votes ${lockB.votes}, fence ${lockB.fence} after A's ${lockA.fence})` : `B refused (${lockB.error})`);
    await a.rpc({ op: 'write', resource: 'f:ctl' });
    if (lockB.granted) await b.rpc({ op: 'write', resource: 'f:ctl' });
    await b.rpc({ op: 'release', resource: 'f:ctl' });
    await a.rpc({ op: 'release', resource: 'f:ctl' });
  });
  return { overlap: analysis.overlap.overlaps > 0, detail };
}

/** The holder pauses mid-hold for 2 × ttl; B takes over and writes; the holder wakes and writes. */
async function pauseTrial(run: RunContext, core: CoreBuild, index: number, fenced: boolean): Promise<PhaseAnalysis> {
  const ttl = run.profile.ttlMs;
  const id = `ctl-pause-${fenced ? 'fenced' : 'unfenced'}-${index}`;
  const resource = fenced ? 'f:pause' : 'u:pause';
  const settings = clientSettings(run, `chaos:${run.runId}:${id}:`, { retryDelayMs: 20, retryJitterMs: 10 });
  return trial(run, id, settings, core, run.supervisor.directUrls(), async (a, b) => {
    const lockA = (await a.rpc({ op: 'acquire', resource, ttlMs: ttl, fenced, retryCount: 0 })) as Granted;
    if (!lockA.granted) throw new Error(`control ${id}: A was not granted (${lockA.error ?? '?'})`);
    await a.rpc({ op: 'write', resource });
    const pausedAt = performance.now();
    a.pause();
    // Delivered now, run when A wakes: the write of a client that did not notice its pause.
    const lateWrite = a.rpc({ op: 'write', resource });
    const lockB = (await b.rpc({ op: 'acquire', resource, ttlMs: ttl, fenced, retryCount: 100 })) as Granted;
    if (lockB.granted) {
      await b.rpc({ op: 'write', resource });
      await b.rpc({ op: 'release', resource });
    }
    await sleep(Math.max(0, 2 * ttl - (performance.now() - pausedAt)));
    a.resume();
    await lateWrite;
    await a.rpc({ op: 'release', resource });
  });
}

/** One targeted trial on a fresh register, checked on its own. */
async function checkedTrial(
  run: RunContext,
  core: CoreBuild,
  kind: TrialKind,
  id: string,
  seed: number,
  settings: Partial<ClientSettings>,
  policy?: EvictionPolicy,
): Promise<{ result: TrialResult; analysis: PhaseAnalysis }> {
  run.workers.register.reset();
  const nemesis: NemesisEvent[] = [];
  const result = await runTrial(run, { kind, id, core, seed, settings, record: recorder(run, nemesis), ...(policy ? { policy } : {}) });
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
    setting: 'quarantine: false',
    settings: { quarantine: false },
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
];

async function runTargetedControl(
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
    const { result, analysis } = await checkedTrial(run, core, control.kind, `ctl-${control.name}-${s}`, s, control.settings, policy);
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
        ? `${caught ? 'caught' : 'NOT caught'} (${what}${result.armed ? '' : ', danger NOT in place'}): seed ${s}: ${result.detail}`
        : `${caught ? `VIOLATION (${what})` : 'no violation'}, ${result.defended ? 'defended' : 'NOT defended'} (${result.defence ?? 'no defence seen'}): ` +
            `seed ${s}: ${result.detail}`,
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

  for (const control of TARGETED_CONTROLS) {
    if (!wanted(control.name)) continue;
    const build = control.build ? buildOf(control.build) : core;
    add(await runTargetedControl(run, build, control, seeds.slice(0, control.seeds ?? seeds.length)));
  }
  return outcomes;
}
