/**
 * npm run mutation [-- --ts | --lua] [--group NAME]… [--file x.lua]… [--limit N]
 *
 * Mutation testing of the lock core (docs/mutation.md): StrykerJS over the safety-path
 * TypeScript files, group by group (groups.mjs: each group's files with the core test files that
 * exercise them), then the Lua mutants of our own (lua-mutants.ts). --ts or --lua runs one of the
 * two; --group runs the named groups only. Both are incremental: a rerun after a small change
 * tests only what changed. Reports: reports/mutation/<group>/mutation.html. Not part of `npm test`.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync } from 'node:fs';
import { GROUPS } from './groups.mjs';

const argv = process.argv.slice(2);
const only = argv.includes('--ts') ? 'ts' : argv.includes('--lua') ? 'lua' : 'both';
const named = argv.flatMap((a, i) => (argv[i - 1] === '--group' ? [a] : []));
const unknown = named.filter((n) => !GROUPS.some((g) => g.name === n));
if (unknown.length > 0) {
  console.error(`unknown group(s) ${unknown.join(', ')}; groups: ${GROUPS.map((g) => g.name).join(', ')}`);
  process.exit(2);
}
const luaArgs = argv.filter((a, i) => !['--ts', '--lua', '--group'].includes(a) && argv[i - 1] !== '--group');
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
    const code = run(
      'npx',
      ['stryker', 'run', '--mutate', group.files.join(','), '--incrementalFile', `reports/stryker-incremental-${group.name}.json`],
      {
        MUTATION_TESTS: group.tests.join(','),
        MUTATION_TEST_NAME: testName,
      },
    );
    if (existsSync('reports/mutation/mutation.json')) {
      mkdirSync(`reports/mutation/${group.name}`, { recursive: true });
      for (const f of ['mutation.html', 'mutation.json']) cpSync(`reports/mutation/${f}`, `reports/mutation/${group.name}/${f}`);
    }
    status ||= code;
  }
}
if (only !== 'ts') status ||= run('node', ['--import', 'tsx', 'scripts/mutation/lua-mutants.ts', ...luaArgs]);
process.exit(status);
