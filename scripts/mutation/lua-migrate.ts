/**
 * Migrates the older entries of reports/lua-mutants.json (keyed by a hash of the scripts and of
 * both stages, lua-stages.ts mutantKey) to the incremental form of lua-cache.ts:
 *
 *   node --import tsx scripts/mutation/lua-migrate.ts --from <commit> [--cache reports/lua-mutants.json]
 *
 * <commit> is the one the older run tested (its worktree's HEAD): the scripts, lua-tests.ts and the
 * test files are read there with git, every mutant's older key recomputed, and each entry whose key
 * matches is rewritten with what it was judged against (a killed one with the test file its
 * `killedBy` names, when exactly one file of the list holds that title). An entry that matches no
 * mutant at that commit is left as it was; the rerun does not read it.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { luaHashOf, migrateOld, type CachedResult } from './lua-cache';
import { mutantsOf } from './lua-operators';
import type { LuaTestSet } from './lua-tests';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SCRIPTS = 'packages/redlock/src/scripts';
const IT = 'packages/redlock/test/integration';

function arg(name: string): string | undefined {
  const a = process.argv.slice(2);
  const i = a.indexOf(name);
  return i < 0 ? undefined : a[i + 1];
}

const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20 });

async function main() {
  const commit = arg('--from');
  if (!commit) {
    console.error('usage: lua-migrate.ts --from <commit> [--cache reports/lua-mutants.json]');
    process.exit(2);
  }
  const cacheFile = resolve(root, arg('--cache') ?? 'reports/lua-mutants.json');
  const at = (path: string) => git('show', `${commit}:${path}`);
  const scripts = git('ls-tree', '--name-only', commit, `${SCRIPTS}/`)
    .split('\n')
    .map((p) => p.replace(/^.*\//, ''))
    .filter((f) => f.endsWith('.lua'))
    .sort();
  const sources = new Map(scripts.map((f) => [f, at(`${SCRIPTS}/${f}`)]));
  // lua-tests.ts at that commit (it imports nothing), loaded from a temporary copy.
  const dir = mkdtempSync(join(tmpdir(), 'lua-migrate-'));
  let lists: Readonly<Record<string, LuaTestSet>>;
  try {
    writeFileSync(join(dir, 'lua-tests.ts'), at('scripts/mutation/lua-tests.ts'));
    lists = ((await import(pathToFileURL(join(dir, 'lua-tests.ts')).href)) as { LUA_TESTS: Record<string, LuaTestSet> }).LUA_TESTS;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const tests = new Map<string, string>();
  const read = (t: string) => tests.get(t) ?? tests.set(t, at(`${IT}/${t}.test.ts`)).get(t)!;
  const cache = JSON.parse(readFileSync(cacheFile, 'utf8')) as Record<string, CachedResult>;
  const out = migrateOld(cache, {
    luaHash: luaHashOf(scripts, (f) => sources.get(f)!),
    lists,
    read,
    mutants: (script) => (sources.has(script) ? mutantsOf(script, sources.get(script)!) : []),
  });
  writeFileSync(cacheFile, `${JSON.stringify(out.cache, null, 1)}\n`);
  console.log(
    `${cacheFile}: ${out.migrated} of ${Object.keys(cache).length} entries migrated from ${commit}; ${out.killers} killed ones with their killing test file recovered`,
  );
}

await main();
