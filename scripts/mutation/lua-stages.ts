/**
 * How lua-mutants.ts judges a Lua mutant, apart from how it runs the tests (so that it is tested
 * without redis-server: test/unit/mutation-lua-stages.test.ts).
 *
 * Two stages (lua-tests.ts): the quick subset first; only a mutant that survives it runs the full
 * list. A mutant that fails either stage is killed (a timeout counts as killed, as in StrykerJS).
 * The control run (no mutant) must pass both stages, or none of the script's mutants is judged:
 * a test that fails without a mutant would "kill" every mutant it meets.
 */
import { createHash } from 'node:crypto';
import { FULL_NAME, type LuaTestSet } from './lua-tests';

export type Stage = 'quick' | 'full';

export interface Outcome {
  readonly status: 'killed' | 'survived' | 'timeout';
  /** The first failing test's name, for a killed mutant. */
  readonly killedBy?: string;
  /** The test file that failed first (and the test's full name when the output gave it), for a killed mutant. */
  readonly killer?: { readonly test: string; readonly name?: string };
}

/** Runs one stage's tests against the sandbox as it is now. */
export type RunStage = (stage: Stage) => Outcome;

/** The quick stage, then the full one only if the mutant survived the quick one. */
export function judge(run: RunStage): Outcome & { readonly stage: Stage } {
  const quick = run('quick');
  if (quick.status !== 'survived') return { ...quick, stage: 'quick' };
  return { ...run('full'), stage: 'full' };
}

/**
 * The unmutated control: each stage must pass, within `tries` runs (on a loaded machine a timing
 * test may fail once without a mutant). Null when both pass; otherwise the stage that kept failing
 * and its last outcome, and the script is not judged.
 */
export function control(run: RunStage, tries = 3): { readonly stage: Stage; readonly outcome: Outcome } | null {
  for (const stage of ['quick', 'full'] as const) {
    let outcome = run(stage);
    for (let i = 1; i < tries && outcome.status !== 'survived'; i++) outcome = run(stage);
    if (outcome.status !== 'survived') return { stage, outcome };
  }
  return null;
}

const sha = (s: string) => createHash('sha1').update(s).digest('hex');

/**
 * A hash of what each stage runs: its test files' names and contents and its name pattern. A
 * surviving mutant's cached result stands only while both are unchanged (lua-cache.ts).
 */
export function stageHashes(set: LuaTestSet, read: (test: string) => string): { readonly quick: string; readonly full: string } {
  const of = (tests: readonly string[], name: string) => sha([name, ...tests.flatMap((t) => [t, read(t)])].join('\0'));
  return { quick: of(set.quick, set.quickName ?? FULL_NAME), full: of(set.full, set.fullName ?? FULL_NAME) };
}

/** The older cache key of one mutant's result (every entry written before lua-cache.ts; lua-migrate.ts reads them). */
export function mutantKey(
  luaHash: string,
  stages: { readonly quick: string; readonly full: string },
  mutant: { readonly file: string; readonly line: number; readonly replacement: string },
): string {
  return sha([luaHash, stages.quick, stages.full, mutant.file, mutant.line, mutant.replacement].join('\0'));
}
