/**
 * `npm run chaos -- --profile ci|long --seed N`: the Jepsen-style chaos harness (chaos/harness). Runs
 * every nemesis against the real lock core, the negative controls and the mutants; writes
 * chaos/reports/latest.json and latest.md (or `--out DIR`); exits 1 if a safe configuration
 * showed a violation or a control or mutant went uncaught, 2 on a usage error.
 *
 *   --profile ci|long     ci: ≥ 2,000 acquisitions per nemesis (a few minutes); long: 50,000
 *   --seed N              seeds every random choice (faults, nodes, holds, control scenarios)
 *   --only a,b            run only these nemeses (e.g. --only none,pause-client; --only '' runs none)
 *   --controls a,b        run only these controls (e.g. --controls restart-rdb-unchecked)
 *   --control-seeds N     seeds per negative control (default: the profile's, 10 in ci)
 *   --no-controls         skip the negative controls
 *   --mutants a,b         run only these mutants (e.g. --mutants quarantine-ignored)
 *   --no-mutants          skip the mutants
 *   --out DIR             where to write latest.json / latest.md (default chaos/reports)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CONTROL_NAMES } from './harness/controls';
import { NEMESIS_NAMES, type NemesisName } from './harness/nemeses';
import { MUTANTS } from './harness/mutants';
import { isProfileName, PROFILES } from './harness/profiles';
import { renderMarkdown } from './harness/report-markdown';
import { runChaos } from './harness/runner';
import { describeFatal } from '../scripts/support/fatal';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));

function usage(message: string): never {
  console.error(
    `chaos: ${message}\nusage: npm run chaos -- --profile ci|long --seed N [--only a,b] [--controls a,b] [--control-seeds N] [--no-controls] [--mutants a,b] [--no-mutants] [--out DIR]`,
  );
  process.exit(2);
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      profile: { type: 'string', default: 'ci' },
      seed: { type: 'string', default: '1' },
      only: { type: 'string' },
      controls: { type: 'string' },
      'control-seeds': { type: 'string' },
      'no-controls': { type: 'boolean', default: false },
      'no-mutants': { type: 'boolean', default: false },
      mutants: { type: 'string' },
      out: { type: 'string', default: join(root, 'chaos', 'reports') },
    },
  });
  if (!isProfileName(values.profile)) usage(`unknown profile ${JSON.stringify(values.profile)}`);
  const seed = Number(values.seed);
  if (!Number.isSafeInteger(seed) || seed < 0) usage(`--seed must be a whole number ≥ 0, got ${JSON.stringify(values.seed)}`);
  const only = values.only
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const name of only ?? [])
    if (!(NEMESIS_NAMES as readonly string[]).includes(name)) usage(`unknown nemesis ${name} (${NEMESIS_NAMES.join(', ')})`);
  const controlNames = values.controls
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const mutantNames = values.mutants
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const name of mutantNames ?? [])
    if (!MUTANTS.some((m) => m.name === name)) usage(`unknown mutant ${name} (${MUTANTS.map((m) => m.name).join(', ')})`);
  for (const name of controlNames ?? []) if (!CONTROL_NAMES.includes(name)) usage(`unknown control ${name} (${CONTROL_NAMES.join(', ')})`);
  const controlSeeds = values['control-seeds'] === undefined ? undefined : Number(values['control-seeds']);
  if (controlSeeds !== undefined && !(Number.isSafeInteger(controlSeeds) && controlSeeds >= 1 && controlSeeds <= 1_000)) {
    usage(`--control-seeds must be a whole number from 1 to 1000, got ${JSON.stringify(values['control-seeds'])}`);
  }
  const profile = { ...PROFILES[values.profile], ...(controlSeeds === undefined ? {} : { controlSeeds }) };

  const started = Date.now();
  const log = (line: string) => console.log(`[chaos +${((Date.now() - started) / 1000).toFixed(1)}s] ${line}`);
  log(`profile ${values.profile}, seed ${seed}`);
  const report = await runChaos({
    root,
    profile,
    seed,
    nemeses: only as NemesisName[] | undefined,
    controls: !values['no-controls'],
    controlNames,
    mutants: !values['no-mutants'],
    mutantNames,
    log,
  });
  const outDir = resolve(values.out);
  mkdirSync(outDir, { recursive: true });
  const markdown = renderMarkdown(report);
  writeFileSync(join(outDir, 'latest.json'), JSON.stringify(report, null, 2) + '\n');
  writeFileSync(join(outDir, 'latest.md'), markdown);
  console.log(`\n${markdown}`);
  log(`report written to ${join(outDir, 'latest.json')} and latest.md`);
  return report.verdict.passed ? 0 : 1;
}

// Ctrl-C / SIGTERM: exit at once; the 'exit' hooks of the supervisor and the workers SIGKILL every child.
process.once('SIGINT', () => process.exit(130));
process.once('SIGTERM', () => process.exit(143));
main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(describeFatal(err));
    process.exit(1);
  },
);
