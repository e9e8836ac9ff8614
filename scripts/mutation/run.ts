/**
 * npm run mutation [-- --ts | --lua] [--quick] [--file x.lua]… [--limit N]
 *
 * Mutation testing of the lock core (docs/mutation.md): StrykerJS over the safety-path
 * TypeScript files (stryker.config.mjs; --quick: the small ones only), then the Lua mutants of our
 * own (lua-mutants.ts). --ts or --lua runs one of the two. Both are incremental: a rerun after a
 * small change tests only what changed. Not part of `npm test`.
 */
import { spawnSync } from 'node:child_process';
import { SAFETY_TS_QUICK } from './safety-files.mjs';

const argv = process.argv.slice(2);
const only = argv.includes('--ts') ? 'ts' : argv.includes('--lua') ? 'lua' : 'both';
const quick = argv.includes('--quick');
const luaArgs = argv.filter((a) => !['--ts', '--lua', '--quick'].includes(a));

function run(command: string, args: readonly string[]): number {
  const started = Date.now();
  const r = spawnSync('nice', ['-n', '15', command, ...args], { stdio: 'inherit' });
  console.log(`\n${command} ${args.join(' ')}: exit ${r.status ?? r.signal}, ${((Date.now() - started) / 60_000).toFixed(1)} min`);
  return r.status ?? 1;
}

let status = 0;
if (only !== 'lua') status ||= run('npx', ['stryker', 'run', ...(quick ? ['--mutate', SAFETY_TS_QUICK.join(',')] : [])]);
if (only !== 'ts') status ||= run('node', ['--import', 'tsx', 'scripts/mutation/lua-mutants.ts', ...luaArgs]);
process.exit(status);
