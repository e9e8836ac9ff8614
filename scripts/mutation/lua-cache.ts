/**
 * The incremental cache of lua-mutants.ts (reports/lua-mutants.json), apart from the runs so that
 * its rule is tested without redis-server (test/unit/mutation-lua-cache.test.ts).
 *
 * The rule, as StrykerJS's incremental mode has it for TypeScript:
 * - a result stands only while the MUTATED script is unchanged, with the snippets it includes
 *   (`--@include _x.lua`, expanded as scripts/gen-lua.mjs does: `scriptHash`); a change to another
 *   script re-tests none of its mutants. StrykerJS would re-test a mutant whose killing test no
 *   longer covers it after such a change (per-test coverage); this cache has no coverage, so its
 *   limit is wider: run with --fresh after one (docs/mutation.md);
 * - a KILLED mutant keeps its result while the test file that killed it is unchanged, is still in
 *   one of the script's two lists, and (when its name is known) the test is still selected by
 *   that stage's name pattern: that file alone kills it again, whatever else changed;
 * - a mutant that SURVIVED or TIMED OUT is tested again as soon as anything its stages run changed
 *   (a test file's name or content in either list, or a name pattern): a new or changed test may
 *   kill it.
 * Older entries: keyed by a hash of the stages (`mutantKey`), read through `migrateOld`; judged
 * against the hash of every script (`luaHash`), read through `upgradeToScriptHash` (both from
 * lua-migrate.ts, which finds the commit that had those scripts).
 */
import { createHash } from 'node:crypto';
import { renameSync, writeFileSync } from 'node:fs';
import { mutantKey, stageHashes, type Stage } from './lua-stages';
import { FULL_NAME, type LuaTestSet } from './lua-tests';

export interface Killer {
  /** The test file, as named in lua-tests.ts (under packages/redlock/test/integration, no `.test.ts`). */
  readonly test: string;
  /** A hash of that file's content when it killed the mutant. */
  readonly hash: string;
  /** The failing test's full name (describe blocks and title), when the output named it. */
  readonly name?: string;
}

export interface CachedResult {
  readonly file: string;
  readonly line: number;
  readonly operator: string;
  readonly replacement: string;
  readonly status: 'killed' | 'survived' | 'timeout';
  /** The stage that decided: 'quick' (killed by the quick subset) or 'full' (ran the full list). */
  readonly stage?: Stage;
  readonly seconds: number;
  /** The first failing test, as the output named it, for a killed mutant. */
  readonly killedBy?: string;
  /** The mutated script's hash, its includes expanded (scriptHashOf), when the mutant was tested. */
  readonly scriptHash?: string;
  /** Older entries: the hash of every Lua script when the mutant was tested (upgradeToScriptHash reads it). */
  readonly luaHash?: string;
  /** What both stages ran (stageHashes) when the mutant was tested. */
  readonly stages?: { readonly quick: string; readonly full: string };
  /** For a killed mutant: the test file that killed it. */
  readonly killer?: Killer;
}

export interface Mutant {
  readonly file: string;
  readonly line: number;
  readonly replacement: string;
}

/** What a rerun has now: the script whose mutants it judges, the scripts, its test lists, and the test files' contents. */
export interface Current {
  /** The mutated script (a file name of packages/redlock/src/scripts). */
  readonly script: string;
  /** A script's source by file name (the mutated one and the snippets it includes). */
  readonly readScript: (script: string) => string;
  readonly set: LuaTestSet;
  readonly read: (test: string) => string;
}

export const sha = (s: string) => createHash('sha1').update(s).digest('hex');

/** The hash of every Lua script (names sorted), the older entries' key (`luaHash`): only the migration reads it now. */
export function luaHashOf(scripts: readonly string[], read: (script: string) => string): string {
  return sha([...scripts].sort().map(read).join('\0'));
}

/** A line that includes a snippet, as scripts/gen-lua.mjs expands it (a file whose name starts with `_`). */
const INCLUDE = /^--@include (_[\w-]+\.lua)\n/gm;

/**
 * A script as Redis runs it: its `--@include _x.lua` lines replaced by those snippets, recursively
 * (scripts/gen-lua.mjs expands them the same way into the generated module; a unit test holds the two
 * equal).
 */
export function expandScript(script: string, read: (script: string) => string, seen: readonly string[] = []): string {
  if (seen.includes(script)) throw new Error(`include cycle at ${script}`);
  return read(script).replace(INCLUDE, (_, snippet: string) => expandScript(snippet, read, [...seen, script]));
}

/**
 * The hash a mutant's result is judged against: its script with every snippet it includes. A
 * mutant of probe.lua is tested again when _replacing.lua changes (it runs inside probe.lua); a
 * mutant of _replacing.lua when _replacing.lua changes, not when a script including it does.
 */
export function scriptHashOf(script: string, read: (script: string) => string): string {
  return sha(expandScript(script, read));
}

/** What a result of `now.script` is judged against: that script with its includes (the rule above). */
export function judgedAgainst(now: Current): string {
  return scriptHashOf(now.script, now.readScript);
}

/** The cache key of a mutant, the same whatever the scripts or tests are (the entry says what it was judged against). */
export function mutantId(m: Mutant): string {
  return `${m.file}:${m.line}:${sha(m.replacement.trim()).slice(0, 16)}`;
}

/** True when a test of the given full name in that file still runs in one of the script's stages. */
function stillRuns(set: LuaTestSet, test: string, name: string | undefined): boolean {
  const stages = [
    { files: set.quick, pattern: set.quickName ?? FULL_NAME },
    { files: set.full, pattern: set.fullName ?? FULL_NAME },
  ];
  return stages.some((s) => s.files.includes(test) && (name === undefined || new RegExp(s.pattern).test(name)));
}

/** Whether a cached entry stands for a rerun now (the rule above). */
export function reusable(entry: CachedResult | undefined, now: Current): boolean {
  if (!entry || entry.scriptHash === undefined || entry.scriptHash !== judgedAgainst(now)) return false;
  if (entry.status === 'killed') {
    const k = entry.killer;
    return k !== undefined && stillRuns(now.set, k.test, k.name) && sha(now.read(k.test)) === k.hash;
  }
  const stages = stageHashes(now.set, now.read);
  return entry.stages !== undefined && entry.stages.quick === stages.quick && entry.stages.full === stages.full;
}

/** The fields a new result carries so that a later run can apply the rule. */
export function provenance(
  outcome: { readonly status: CachedResult['status']; readonly killer?: { readonly test: string; readonly name?: string } },
  now: Current,
): Pick<CachedResult, 'scriptHash' | 'stages' | 'killer'> {
  const stages = stageHashes(now.set, now.read);
  const k = outcome.status === 'killed' ? outcome.killer : undefined;
  return { scriptHash: judgedAgainst(now), stages, ...(k ? { killer: { ...k, hash: sha(now.read(k.test)) } } : {}) };
}

/**
 * A script's mutants in order: one whose cached result stands (`reusable`) is taken from the cache,
 * any other is tested (`test`; undefined: left untested, over --limit) and the cache saved at once
 * (`save`), so a run stopped midway keeps every result it finished.
 */
export function judgeMutants<M extends Mutant>(
  mutants: readonly M[],
  cache: Record<string, CachedResult>,
  now: Current,
  test: (m: M) => CachedResult | undefined,
  save: (cache: Readonly<Record<string, CachedResult>>) => void,
): CachedResult[] {
  const results: CachedResult[] = [];
  for (const m of mutants) {
    const key = mutantId(m);
    const cached = cache[key];
    const result = cached && reusable(cached, now) ? cached : test(m);
    if (!result) continue;
    if (result !== cached) {
      cache[key] = result;
      save(cache);
    }
    results.push(result);
  }
  return results;
}

/** Writes the cache whole or not at all (a temporary file renamed over it): a run killed while writing leaves the last one. */
export function saveCache(file: string, cache: Readonly<Record<string, CachedResult>>): void {
  writeFileSync(`${file}.tmp`, `${JSON.stringify(cache, null, 1)}\n`);
  renameSync(`${file}.tmp`, file);
}

const IT_PATH = /packages\/redlock\/test\/integration\/([\w.-]+)\.test\.ts/;

/**
 * The first failing test in vitest's output (stdout and stderr together): its file from the
 * `FAIL  <file> > <describe> > <test>` line (a file that failed to load or whose hook failed has
 * no ` > ` part), else from the file line `❯ <file> (n tests | 1 failed)`.
 */
export function parseKiller(output: string): { readonly test: string; readonly name?: string } | undefined {
  const plain = output.replace(/\u001b\[[0-9;]*m/g, '');
  const fail = /^\s*FAIL\s+(\S+)(.*)$/m.exec(plain);
  const path = fail && IT_PATH.exec(fail[1]!);
  if (path) {
    const parts = fail![2]!.split(' > ').slice(1);
    const name = parts.length > 0 ? parts.join(' ').trim() : undefined;
    return { test: path[1]!, ...(name ? { name } : {}) };
  }
  const file = /❯\s+(\S+)\s+\(\d+ tests? \| \d+ failed/.exec(plain);
  const m = file && IT_PATH.exec(file[1]!);
  return m ? { test: m[1]! } : undefined;
}

/**
 * The test file an older entry's `killedBy` names: the one file of the script's full list whose
 * source holds that text (the time vitest appended taken off). The text is a test's title as the
 * default reporter listed it, or the end of one whose title holds a `×`; a title under vitest's
 * slow-test threshold is listed only under the file that failed. Undefined when no file, or more
 * than one, holds it: that entry is tested again.
 */
export function recoverKiller(killedBy: string | undefined, files: readonly string[], read: (test: string) => string): string | undefined {
  const text = killedBy?.replace(/\s+\d+(?:\.\d+)?m?s$/, '').trim();
  if (!text || text.length < 8) return undefined;
  const holders = files.filter((t) => read(t).includes(text));
  return holders.length === 1 ? holders[0] : undefined;
}

/** Then: what the older entries were judged against (the scripts, lists and test files at their commit). */
export interface Then {
  readonly luaHash: string;
  readonly lists: Readonly<Record<string, LuaTestSet>>;
  readonly read: (test: string) => string;
  /** Each script's mutants at that commit, their replacement lines as written (the older key hashed them untrimmed). */
  readonly mutants: (script: string) => readonly Mutant[];
}

/**
 * Rewrites the older entries (keyed by mutantKey) that were written at `then` into entries keyed by
 * mutantId that carry what they were judged against; a killed one gets its killer back from
 * `killedBy` when recoverKiller finds it (else no killer, and it is tested again). Entries whose
 * key matches no mutant at `then` are kept as they are (a migration from another commit may match
 * them; the rerun never reads them). Returns the new cache and how many were migrated.
 */
export function migrateOld(
  cache: Readonly<Record<string, CachedResult>>,
  then: Then,
): { readonly cache: Record<string, CachedResult>; readonly migrated: number; readonly killers: number } {
  const out: Record<string, CachedResult> = { ...cache };
  let migrated = 0;
  let killers = 0;
  for (const [script, set] of Object.entries(then.lists)) {
    const stages = stageHashes(set, then.read);
    for (const m of then.mutants(script)) {
      const key = mutantKey(then.luaHash, stages, m);
      const entry = cache[key];
      if (!entry || entry.luaHash !== undefined) continue;
      const test = entry.status === 'killed' ? recoverKiller(entry.killedBy, set.full, then.read) : undefined;
      if (test) killers++;
      delete out[key];
      out[mutantId(m)] = { ...entry, luaHash: then.luaHash, stages, ...(test ? { killer: { test, hash: sha(then.read(test)) } } : {}) };
      migrated++;
    }
  }
  return { cache: out, migrated, killers };
}

/**
 * Gives each entry judged against every script's hash (`luaHash`, no `scriptHash`) the hash of its
 * own script at the commit whose scripts had that `luaHash` (`scriptsAt`: a reader of that
 * commit's scripts, undefined when no commit had them). Such an entry stands again while its own
 * script is unchanged, whatever happened to the others. Entries of no known commit are left as
 * they are (never reused). Returns the new cache and how many were upgraded.
 */
export function upgradeToScriptHash(
  cache: Readonly<Record<string, CachedResult>>,
  scriptsAt: (luaHash: string) => ((script: string) => string) | undefined,
): { readonly cache: Record<string, CachedResult>; readonly upgraded: number } {
  const out: Record<string, CachedResult> = { ...cache };
  let upgraded = 0;
  for (const [key, entry] of Object.entries(cache)) {
    if (entry.scriptHash !== undefined || entry.luaHash === undefined) continue;
    const read = scriptsAt(entry.luaHash);
    if (!read) continue;
    out[key] = { ...entry, scriptHash: scriptHashOf(entry.file, read) };
    upgraded++;
  }
  return { cache: out, upgraded };
}
