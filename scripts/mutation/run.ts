/**
 * npm run mutation [-- --ts | --lua] [--group NAME]… [--only path.ts]… [--file x.lua]… [--limit N]
 *
 * Mutation testing of the lock core (docs/mutation.md): StrykerJS over the safety-path
 * TypeScript files, group by group (groups.mjs: each group's files with the core test files that
 * exercise them), then the Lua mutants of our own (lua-mutants.ts). --ts or --lua runs one of the
 * two; --group runs the named groups only; --only mutates only the named files of those groups (with
 * the group's tests and an incremental file of its own, e.g. --only packages/redlock/src/grant.ts; a
 * whole group with no incremental file yet is seeded from those, stryker-seed.ts). Both are
 * incremental: a rerun after a small change tests only what changed. Reports: reports/mutation/<group>/mutation.html. Not part of `npm test`.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { GROUPS } from './groups.mjs';
import { seedGroupFile } from './stryker-seed';

const argv = process.argv.slice(2);
if (argv.includes('--help')) {
  console.log(
    'npm run mutation [-- --ts | --lua] [--group NAME]… [--only path.ts]… [--file x.lua]… [--limit N]\n' +
      `groups: ${GROUPS.map((g) => `${g.name} (${g.files.join(', ')})`).join('; ')}`,
  );
  process.exit(0);
}
const only = argv.includes('--ts') ? 'ts' : argv.includes('--lua') ? 'lua' : 'both';
const named = argv.flatMap((a, i) => (argv[i - 1] === '--group' ? [a] : []));
const onlyFiles = argv.flatMap((a, i) => (argv[i - 1] === '--only' ? [a] : []));
const ungrouped = onlyFiles.filter((f) => !GROUPS.some((g) => g.files.includes(f)));
if (ungrouped.length > 0) {
  console.error(`--only names no safety file of a group: ${ungrouped.join(', ')}`);
  process.exit(2);
}
const unknown = named.filter((n) => !GROUPS.some((g) => g.name === n));
if (unknown.length > 0) {
  console.error(`unknown group(s) ${unknown.join(', ')}; groups: ${GROUPS.map((g) => g.name).join(', ')}`);
  process.exit(2);
}
const luaArgs = argv.filter((a, i) => !['--ts', '--lua', '--group', '--only'].includes(a) && !['--group', '--only'].includes(argv[i - 1]!));
// The fencing stress test outruns its timeout unmutated on a loaded machine; it kills nothing the
// others do not (docs/mutation.md).
const testName = process.env.MUTATION_TEST_NAME ?? '^(?!.*many clients, one resource)';

function run(command: string, args: readonly string[], env: Record<string, string> = {}): number {
  const started = Date.now();
  const r = spawnSync('nice', ['-n', '15', command, ...args], { stdio: 'inherit', env: { ...process.env, ...env } });
  console.log(`\n${command} ${args.join(' ')}: exit ${r.status ?? r.signal}, ${((Date.now() - started) / 60_000).toFixed(1)} min`);
  return r.status ?? 1;
}

let status = 0;
if (only !== 'lua') {
  for (const group of GROUPS.filter((g) => named.length === 0 || named.includes(g.name))) {
    const files = onlyFiles.length === 0 ? group.files : group.files.filter((f) => onlyFiles.includes(f));
    if (files.length === 0) continue;
    // A narrowed run keeps results of its own: the group's file holds every file's mutants.
    const incremental =
      files === group.files ? group.name : `${group.name}-${files.map((f) => f.replace(/^.*\//, '').replace(/\.ts$/, '')).join('-')}`;
    const incrementalFile = `reports/stryker-incremental-${incremental}.json`;
    if (files === group.files) {
      // A whole group with no results of its own yet starts from its files' narrower runs (stryker-seed.ts).
      const seeded = seedGroupFile(incrementalFile, group.files);
      if (seeded.from.length > 0)
        console.log(
          `${incrementalFile}: seeded from ${seeded.from.join(', ')} (${seeded.dropped} mutants left out: a test file they name differs)`,
        );
    }
    const startedAt = Date.now();
    const code = run('npx', ['stryker', 'run', '--mutate', files.join(','), '--incrementalFile', incrementalFile], {
      MUTATION_TESTS: group.tests.join(','),
      MUTATION_TEST_NAME: testName,
    });
    // Only this run's report: a run stopped in its dry run leaves the previous one in place.
    if (existsSync('reports/mutation/mutation.json') && statSync('reports/mutation/mutation.json').mtimeMs >= startedAt) {
      mkdirSync(`reports/mutation/${incremental}`, { recursive: true });
      for (const f of ['mutation.html', 'mutation.json']) cpSync(`reports/mutation/${f}`, `reports/mutation/${incremental}/${f}`);
    }
    status ||= code;
  }
}
if (only !== 'ts') status ||= run('node', ['--import', 'tsx', 'scripts/mutation/lua-mutants.ts', ...luaArgs]);
process.exit(status);
