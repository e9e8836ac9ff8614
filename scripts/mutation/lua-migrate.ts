/**
 * Migrates the older entries of reports/lua-mutants.json to the incremental form of lua-cache.ts:
 *
 *   node --import tsx scripts/mutation/lua-migrate.ts [--from <commit>] [--cache reports/lua-mutants.json]
 *
 * 1. With --from, entries keyed by a hash of the scripts and of both stages (lua-stages.ts
 *    mutantKey): <commit> is the one the older run tested (its worktree's HEAD); the scripts,
 *    lua-tests.ts and the test files are read there with git, every mutant's older key recomputed,
 *    and each entry whose key matches is rewritten with what it was judged against (a killed one
 *    with the test file its `killedBy` names, when exactly one file of the list holds that title).
 * 2. Always, entries judged against the hash of every script (`luaHash`) get the hash of their own
 *    script (`scriptHash`, its includes expanded) at the commit whose scripts had that luaHash: the
 *    commits that touched packages/redlock/src/scripts, newest first, and the working tree.
 * An entry that matches nothing is left as it was; the rerun does not read it.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { luaHashOf, migrateOld, saveCache, upgradeToScriptHash, type CachedResult } from './lua-cache';
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

/** The scripts of a commit (or of the working tree, commit undefined), by name. */
function scriptsOf(commit: string | undefined): Map<string, string> {
  if (commit === undefined) {
    const dir = join(root, SCRIPTS);
    return new Map(
      readdirSync(dir)
        .filter((f) => f.endsWith('.lua'))
        .map((f) => [f, readFileSync(join(dir, f), 'utf8')]),
    );
  }
  const names = git('ls-tree', '--name-only', commit, `${SCRIPTS}/`)
    .split('\n')
    .map((p) => p.replace(/^.*\//, ''))
    .filter((f) => f.endsWith('.lua'));
  return new Map(names.map((f) => [f, git('show', `${commit}:${SCRIPTS}/${f}`)]));
}

/** luaHash → that commit's scripts, for every state the scripts directory has been in (lua-cache.ts upgradeToScriptHash). */
function scriptStates(): Map<string, Map<string, string>> {
  const states = new Map<string, Map<string, string>>();
  const commits = git('log', '--format=%H', '--', `${SCRIPTS}/`).split('\n').filter(Boolean);
  for (const commit of [undefined, ...commits]) {
    const sources = scriptsOf(commit);
    const hash = luaHashOf([...sources.keys()], (f) => sources.get(f)!);
    if (!states.has(hash)) states.set(hash, sources);
  }
  return states;
}

async function fromStageKeys(commit: string, cache: Record<string, CachedResult>) {
  const at = (path: string) => git('show', `${commit}:${path}`);
  const sources = scriptsOf(commit);
  const scripts = [...sources.keys()].sort();
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
  return migrateOld(cache, {
    luaHash: luaHashOf(scripts, (f) => sources.get(f)!),
    lists,
    read,
    mutants: (script) => (sources.has(script) ? mutantsOf(script, sources.get(script)!) : []),
  });
}

async function main() {
  const commit = arg('--from');
  const cacheFile = resolve(root, arg('--cache') ?? 'reports/lua-mutants.json');
  let cache = JSON.parse(readFileSync(cacheFile, 'utf8')) as Record<string, CachedResult>;
  const total = Object.keys(cache).length;
  if (commit) {
    const out = await fromStageKeys(commit, cache);
    cache = out.cache;
    console.log(
      `${cacheFile}: ${out.migrated} of ${total} entries migrated from ${commit}; ${out.killers} killed ones with their killing test file recovered`,
    );
  }
  const states = scriptStates();
  const up = upgradeToScriptHash(cache, (luaHash) => {
    const sources = states.get(luaHash);
    return sources && ((f: string) => sources.get(f)!);
  });
  saveCache(cacheFile, up.cache);
  console.log(`${cacheFile}: ${up.upgraded} of ${total} entries judged against every script's hash now judged against their own script's`);
}

await main();
