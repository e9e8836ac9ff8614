/**
 * A whole chaos run: every nemesis against the real core, the negative controls, then every
 * mutant until a nemesis catches it. Returns the report; the caller writes it and sets the exit code.
 */
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { findRedisServer, redisServerVersion } from '../../lib/cluster';
import { runControls, type ControlOutcome } from './controls';
import { buildMutant, coreSourceDir } from './mutant-build';
import { MUTANTS } from './mutants';
import { judgeLiveness, livenessFailure } from './liveness';
import { NEMESES, NEMESIS_NAMES, type NemesisName } from './nemeses';
import { runPhase, type PhaseOutcome } from './phase';
import type { ChaosProfile } from './profiles';
import { buildReport, mutantAttempt } from './report';
import type { ChaosReport, MutantReport } from '../../lib/api/chaos-report';
import { openRun, scratchDir } from './run-env';
import type { CoreBuild, RunContext } from './run-context';

export interface ChaosOptions {
  root: string;
  profile: ChaosProfile;
  seed: number;
  /** Run only these nemeses (default: all). */
  nemeses?: readonly NemesisName[];
  controls?: boolean;
  /** Run only these controls (default: all). */
  controlNames?: readonly string[];
  mutants?: boolean;
  /** Run only these mutants (default: all). */
  mutantNames?: readonly string[];
  log(line: string): void;
}

interface LuaModule {
  ACQUIRE_SCRIPT: { sha: string };
  EXTEND_SCRIPT: { sha: string };
}

async function leaseShas(builds: readonly CoreBuild[]): Promise<string[]> {
  const shas = new Set<string>();
  for (const b of builds) {
    const lua = (await import(pathToFileURL(join(dirname(b.indexPath), 'scripts', 'index.ts')).href)) as LuaModule;
    shas.add(lua.ACQUIRE_SCRIPT.sha).add(lua.EXTEND_SCRIPT.sha);
  }
  return [...shas];
}

/**
 * Run a mutant against its nemeses until one catches it: a safety violation, or (where the nemesis
 * keeps a quorum) acquires failing for unavailability. Not the throughput floor: a mutant's phase
 * lasts a few seconds, the first of which its client processes spend loading the build, so its rate
 * says little (safe builds measured under 20 % of the long no-fault phase's).
 */
async function runMutant(run: RunContext, build: CoreBuild, name: string, seed: number): Promise<MutantReport> {
  const mutant = MUTANTS.find((m) => m.name === name)!;
  const report: MutantReport = { name, description: mutant.description, caught: false, caughtBy: null, attempts: [] };
  for (const [attempt, nemesis] of mutant.nemeses.entries()) {
    const outcome = await runPhase(run, {
      id: `mutant-${name}-${attempt + 1}-${nemesis}`,
      nemesis,
      core: build,
      target: 0,
      maxMs: run.profile.mutantPhaseMs,
      minCycles: mutant.cycles,
      seed: seed + attempt * 7,
      loops: mutant.loops,
    });
    const quorum = NEMESES[nemesis].keepsQuorum;
    const a = outcome.analysis.acquisitions;
    const live = quorum ? judgeLiveness({ ...a, durationMs: outcome.durationMs }, null, quorum) : null;
    const found = live && !live.passed ? [...outcome.analysis.caughtBy, 'liveness'] : outcome.analysis.caughtBy;
    // A mutant aimed at some checkers counts as caught by them only.
    const checkers = mutant.expect ? found.filter((c) => mutant.expect!.includes(c)) : found;
    const tried = mutantAttempt(outcome);
    report.attempts.push({
      ...tried,
      checkers,
      examples: live && !live.passed ? [livenessFailure(nemesis, live), ...tried.examples].slice(0, 3) : tried.examples,
    });
    const g = outcome.analysis.slots.grants;
    run.log(
      `mutant ${name} × ${nemesis}: ${outcome.analysis.violations} violation(s) ${found.join(', ')}` +
        (mutant.loops === 'slots'
          ? ` (slots: ${g.sem} permits, ${g.read} reads, ${g.write} writes granted, ${outcome.analysis.slots.failures} refused)`
          : ''),
    );
    if (checkers.length > 0) {
      report.caught = true;
      report.caughtBy = { nemesis, checkers };
      break;
    }
  }
  return report;
}

export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const { root, profile, seed, log } = options;
  const startedAt = new Date();
  const t0 = performance.now();
  const real: CoreBuild = { name: 'real', indexPath: join(coreSourceDir(root), 'index.ts') };
  const scratch = scratchDir('redlock-chaos-mutants-');
  const buildRoot = scratch.path;
  try {
    const chosen = options.mutantNames ? MUTANTS.filter((m) => options.mutantNames!.includes(m.name)) : MUTANTS;
    const mutants = options.mutants === false ? [] : chosen.map((m) => ({ mutant: m, build: buildMutant(root, buildRoot, m) }));
    const run = await openRun({ root, profile, leaseScriptShas: await leaseShas([real, ...mutants.map((m) => m.build)]), log });
    const phases: PhaseOutcome[] = [];
    let controls: ControlOutcome[] = [];
    const mutantReports: MutantReport[] = [];
    try {
      const names = options.nemeses ?? NEMESIS_NAMES;
      for (const [i, nemesis] of names.entries()) {
        log(`nemesis ${nemesis}…`);
        const outcome = await runPhase(run, {
          id: nemesis,
          nemesis,
          core: real,
          target: profile.targetPerNemesis,
          maxMs: profile.maxPhaseMs,
          minCycles: Math.max(profile.minCycles, NEMESES[nemesis].minCycles ?? 0),
          seed: seed * 100 + i,
        });
        phases.push(outcome);
        const a = outcome.analysis;
        log(
          `nemesis ${nemesis}: ${a.acquisitions.successes} acquisitions in ${(outcome.durationMs / 1000).toFixed(1)} s, ` +
            `${a.violations} violation(s)${a.caughtBy.length ? ` (${a.caughtBy.join(', ')})` : ''}; ` +
            `slots: ${a.slots.grants.sem} permits, ${a.slots.grants.read} reads, ${a.slots.grants.write} writes granted, ${a.slots.failures} refused, p50/p99 ${a.slots.p50Ms?.toFixed(0)}/${a.slots.p99Ms?.toFixed(0)} ms`,
        );
      }
      if (options.controls !== false) {
        log('negative controls…');
        // A control may run a mutant's build (the short-max-ttl one runs the core without the ceiling agreement).
        const buildOf = (name: string) =>
          mutants.find((m) => m.mutant.name === name)?.build ??
          buildMutant(root, buildRoot, MUTANTS.find((m) => m.name === name) ?? unknownMutant(name));
        controls = await runControls(run, real, seed, buildOf, options.controlNames);
      }
      for (const [i, { mutant, build }] of mutants.entries()) {
        mutantReports.push(await runMutant(run, build, mutant.name, seed * 100 + 50 + i));
      }
    } finally {
      await run.close();
    }
    const host = {
      cpus: cpus().length,
      loadAverage: loadavg().map((l) => Math.round(l * 100) / 100),
      node: process.version,
      redis: await safeRedisVersion(),
    };
    return buildReport({ profile, seed, startedAt, durationMs: performance.now() - t0, host, phases, controls, mutants: mutantReports });
  } finally {
    scratch.remove();
  }
}

function unknownMutant(name: string): never {
  throw new Error(`no mutant named ${name} in chaos/harness/mutants.ts`);
}

async function safeRedisVersion(): Promise<string> {
  const binary = findRedisServer();
  return binary ? redisServerVersion(binary).catch(() => 'unknown') : 'unknown';
}
