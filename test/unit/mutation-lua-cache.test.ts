import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  expandScript,
  judgeMutants,
  luaHashOf,
  migrateOld,
  mutantId,
  parseKiller,
  provenance,
  recoverKiller,
  reusable,
  saveCache,
  scriptHashOf,
  upgradeToScriptHash,
  type CachedResult,
  type Current,
} from '../../scripts/mutation/lua-cache';
import { mutantKey, stageHashes } from '../../scripts/mutation/lua-stages';
import type { LuaTestSet } from '../../scripts/mutation/lua-tests';

// lua-mutants.ts keeps a Lua mutant's result as StrykerJS's incremental mode does: a killed mutant
// while its script (with what it includes) and its killing test file are unchanged, a survivor only
// while its script and nothing its stages run changed.

const set: LuaTestSet = { quick: ['x-mutants'], full: ['x-mutants', 'redlock-core', 'redlock-slow'] };
const sources: Record<string, string> = {
  'x-mutants': "describe('x.lua', () => { it('refuses a second holder', …) })",
  'redlock-core': "it('acquire sets the token on every node', …)",
  'redlock-slow': "it('a restart from an older RDB quarantines', …)",
};
// x.lua includes a snippet; y.lua is another script.
const scripts: Record<string, string> = {
  'x.lua': 'local a = tonumber(ARGV[1])\n--@include _shared.lua\nif a == 1 then return shared() end\n',
  '_shared.lua': 'local function shared() return 2 end\n',
  'y.lua': "return redis.call('GET', KEYS[1])\n",
};
const readScripts = (edits: Record<string, string>) => (f: string) => ({ ...scripts, ...edits })[f]!;
const current = (over: Partial<Current> = {}, files: Record<string, string> = {}, scriptEdits: Record<string, string> = {}): Current => ({
  script: 'x.lua',
  readScript: readScripts(scriptEdits),
  set,
  read: (t) => ({ ...sources, ...files })[t]!,
  ...over,
});
const mutant = { file: 'x.lua', line: 3, operator: 'comparison', replacement: '  if a ~= 1 then' };

function tested(status: CachedResult['status'], killer?: { test: string; name?: string }, now = current()): CachedResult {
  return {
    file: mutant.file,
    line: mutant.line,
    operator: mutant.operator,
    replacement: mutant.replacement.trim(),
    status,
    seconds: 4,
    ...provenance({ status, ...(killer ? { killer } : {}) }, now),
  };
}

describe('a killed Lua mutant keeps its result while its killer and the scripts are unchanged', () => {
  const killed = tested('killed', { test: 'x-mutants', name: 'x.lua refuses a second holder' });

  it('is reused after another test file of its stages changed, or another file was added to its list', () => {
    expect(reusable(killed, current())).toBe(true);
    expect(reusable(killed, current({}, { 'redlock-core': 'changed' }))).toBe(true);
    expect(reusable(killed, current({ set: { ...set, full: [...set.full, 'redlock-new'] } }, { 'redlock-new': 'new' }))).toBe(true);
  });

  it('is tested again when the file that killed it changed', () => {
    expect(reusable(killed, current({}, { 'x-mutants': `${sources['x-mutants']} // edited` }))).toBe(false);
  });

  it('is reused after ANOTHER Lua script changed (as StrykerJS reuses a mutant when another source file changed)', () => {
    expect(reusable(killed, current({}, {}, { 'y.lua': "return redis.call('DEL', KEYS[1])\n" }))).toBe(true);
  });

  it('is tested again when its own script changed, or a snippet it includes did', () => {
    expect(reusable(killed, current({}, {}, { 'x.lua': `-- a comment\n${scripts['x.lua']}` }))).toBe(false);
    expect(reusable(killed, current({}, {}, { '_shared.lua': 'local function shared() return 3 end\n' }))).toBe(false);
  });

  it('is tested again when its killer left both lists, or its test is no longer selected by the stage pattern', () => {
    expect(reusable(killed, current({ set: { quick: ['redlock-core'], full: ['redlock-core', 'redlock-slow'] } }))).toBe(false);
    const excluded = { ...set, quickName: '^(?!.*second holder)', fullName: '^(?!.*second holder)' };
    expect(reusable(killed, current({ set: excluded }))).toBe(false);
    // Excluded from the quick stage only: the full stage still runs it.
    expect(reusable(killed, current({ set: { ...set, quickName: '^(?!.*second holder)' } }))).toBe(true);
  });

  it('a killed entry that does not say which file killed it is tested again', () => {
    expect(reusable({ ...killed, killer: undefined }, current())).toBe(false);
  });
});

describe('a surviving or timed-out Lua mutant is tested again whenever its stages changed', () => {
  for (const status of ['survived', 'timeout'] as const) {
    const entry = tested(status);

    it(`${status}: reused only while nothing its stages run changed`, () => {
      expect(reusable(entry, current())).toBe(true);
      for (const t of set.full) expect(reusable(entry, current({}, { [t]: 'changed' })), t).toBe(false);
      expect(reusable(entry, current({ set: { ...set, full: [...set.full, 'redlock-new'] } }, { 'redlock-new': '' }))).toBe(false);
      expect(reusable(entry, current({ set: { ...set, fullName: '^(?!.*slow)' } }))).toBe(false);
      expect(reusable(entry, current({}, {}, { 'x.lua': 'return 1\n' }))).toBe(false);
      expect(reusable(entry, current({}, {}, { 'y.lua': 'return 1\n' }))).toBe(true);
    });
  }

  it('an older entry (no script hash) is never reused as it is', () => {
    const { scriptHash: _, ...older } = tested('survived');
    expect(reusable(older, current())).toBe(false);
    expect(reusable(undefined, current())).toBe(false);
  });
});

describe("which test file killed a mutant, from vitest's output", () => {
  // As lua-mutants.ts met it (stdout, then stderr).
  const output = [
    ' ❯ packages/redlock/test/integration/redlock-probe-mutants.test.ts (12 tests | 1 failed) 425ms',
    '     × an old-layout fence key below the hash register never lowers it 44ms',
    '     · no sentinel: the register floored at now × 1000, a reseed pending',
    ' Test Files  1 failed (6)',
    '⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯',
    '',
    ' FAIL  packages/redlock/test/integration/redlock-probe-mutants.test.ts > probe.lua: the register > an old-layout fence key below the hash register never lowers it',
    'QuorumUnavailableError: acquire "r": too few nodes could vote',
  ].join('\n');

  it('names the file and the full test name of the FAIL line', () => {
    expect(parseKiller(output)).toEqual({
      test: 'redlock-probe-mutants',
      name: 'probe.lua: the register an old-layout fence key below the hash register never lowers it',
    });
  });

  it('a file that failed as a whole (a hook, an import) names the file alone; without a FAIL line, the failed file line', () => {
    const hook = ' FAIL  packages/redlock/test/integration/redlock-core.test.ts [ packages/redlock/test/integration/redlock-core.test.ts ]';
    expect(parseKiller(hook)).toEqual({ test: 'redlock-core' });
    expect(parseKiller(output.split('\n').slice(0, 4).join('\n'))).toEqual({ test: 'redlock-probe-mutants' });
    expect(parseKiller(' Tests  3 passed (3)')).toBeUndefined();
  });
});

describe('older entries (keyed by a hash of the stages) migrated from the commit that wrote them', () => {
  const luaThen = luaHashOf(Object.keys(scripts), readScripts({}));
  const then = { luaHash: luaThen, lists: { 'x.lua': set }, read: (t: string) => sources[t]!, mutants: () => [mutant] };
  const olderKey = mutantKey(luaThen, stageHashes(set, then.read), mutant);
  // Then the upgrade to the script's own hash, as lua-migrate.ts does after migrateOld.
  const migrate = (older: Record<string, unknown>) => {
    const out = migrateOld(older as Record<string, CachedResult>, then);
    return { ...out, cache: upgradeToScriptHash(out.cache, (h) => (h === luaThen ? readScripts({}) : undefined)).cache };
  };

  it('recovers the killing file from killedBy, the time taken off, when one file of the list holds that title', () => {
    expect(recoverKiller('refuses a second holder 12ms', set.full, then.read)).toBe('x-mutants');
    expect(recoverKiller('1000, a reseed pending 2ms', set.full, then.read)).toBeUndefined();
    expect(recoverKiller("it('a", set.full, then.read)).toBeUndefined();
    expect(recoverKiller(undefined, set.full, then.read)).toBeUndefined();
  });

  it('a killed entry whose killer is recovered is reused after another file changed, not after its killer changed', () => {
    const older = {
      [olderKey]: {
        ...mutant,
        replacement: mutant.replacement.trim(),
        status: 'killed',
        seconds: 3,
        killedBy: 'refuses a second holder 9ms',
      },
    };
    const out = migrate(older);
    expect(out).toMatchObject({ migrated: 1, killers: 1 });
    const entry = out.cache[mutantId(mutant)];
    expect(entry?.killer?.test).toBe('x-mutants');
    expect(out.cache[olderKey]).toBeUndefined();
    expect(reusable(entry, current({}, { 'redlock-core': 'changed' }))).toBe(true);
    expect(reusable(entry, current({}, { 'x-mutants': 'changed' }))).toBe(false);
  });

  it('a survivor is migrated with its stages (re-tested once they change); an entry of another commit is left unread', () => {
    const older = {
      [olderKey]: { ...mutant, status: 'survived', seconds: 60 },
      ['f'.repeat(40)]: { ...mutant, status: 'survived', seconds: 1 },
    };
    const out = migrate(older);
    expect(out).toMatchObject({ migrated: 1, killers: 0 });
    expect(reusable(out.cache[mutantId(mutant)], current())).toBe(true);
    expect(reusable(out.cache[mutantId(mutant)], current({}, { 'redlock-slow': 'new test' }))).toBe(false);
    expect(out.cache['f'.repeat(40)]?.luaHash).toBeUndefined();
  });

  it('nothing is migrated when the scripts at that commit are not the ones the entries were keyed with', () => {
    const older = { [olderKey]: { ...mutant, status: 'killed', seconds: 3, killedBy: 'refuses a second holder 9ms' } };
    expect(migrateOld(older as Record<string, CachedResult>, { ...then, luaHash: 'lua-0' }).migrated).toBe(0);
  });
});

describe("entries judged against every script's hash, upgraded to their own script's", () => {
  const luaThen = luaHashOf(Object.keys(scripts), readScripts({}));
  const { scriptHash: _, ...judged } = tested('killed', { test: 'x-mutants', name: 'x.lua refuses a second holder' });
  const older = { [mutantId(mutant)]: { ...judged, luaHash: luaThen } };
  const known = (h: string) => (h === luaThen ? readScripts({}) : undefined);

  it("take their own script's hash at the commit whose scripts had that hash: reused after another script changed since, not after their own", () => {
    const out = upgradeToScriptHash(older, known);
    expect(out.upgraded).toBe(1);
    const entry = out.cache[mutantId(mutant)];
    expect(entry?.scriptHash).toBe(scriptHashOf('x.lua', readScripts({})));
    expect(reusable(entry, current({}, {}, { 'y.lua': 'return 0\n' }))).toBe(true);
    expect(reusable(entry, current({}, {}, { 'x.lua': 'return 0\n' }))).toBe(false);
  });

  it('an entry whose scripts no commit had is left as it was, and not reused', () => {
    const out = upgradeToScriptHash(older, () => undefined);
    expect(out.upgraded).toBe(0);
    expect(reusable(out.cache[mutantId(mutant)], current())).toBe(false);
  });
});

describe('a script as Redis runs it: its includes expanded as scripts/gen-lua.mjs does', () => {
  it('replaces each --@include line by the snippet', () => {
    expect(expandScript('x.lua', readScripts({}))).toBe(
      'local a = tonumber(ARGV[1])\nlocal function shared() return 2 end\nif a == 1 then return shared() end\n',
    );
    expect(() => expandScript('_a.lua', (f) => (f === '_a.lua' ? '--@include _b.lua\n' : '--@include _a.lua\n'))).toThrow(/cycle/);
  });

  it('gives every script of packages/redlock/src/scripts the source the generated module holds', () => {
    const dir = join(__dirname, '../../packages/redlock/src/scripts');
    const read = (f: string) => readFileSync(join(dir, f), 'utf8');
    // The generated module (committed; `node scripts/gen-lua.mjs --check` keeps it current), read as text.
    const generated = read('index.ts');
    const names = readdirSync(dir).filter((f) => f.endsWith('.lua') && !f.startsWith('_'));
    expect(names.length).toBe((generated.match(/^ {2}source: /gm) ?? []).length);
    for (const f of names) expect(generated.includes(`  source: ${JSON.stringify(expandScript(f, read))},\n`), f).toBe(true);
    expect(expandScript('probe.lua', read)).toContain(read('_replacing.lua'));
  });
});

describe('the cache is saved after each mutant: a stopped run keeps what it tested', () => {
  const mutants = [1, 2, 3, 4].map((line) => ({ ...mutant, line }));

  it('a run stopped at its third mutant leaves the first two results in the file, and the rerun tests only the rest', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lua-cache-'));
    try {
      const file = join(dir, 'lua-mutants.json');
      const test = (m: (typeof mutants)[number]) => {
        if (m.line === 3) throw new Error('stopped');
        return { ...tested('killed', { test: 'x-mutants' }), line: m.line };
      };
      expect(() => judgeMutants(mutants, {}, current(), test, (c) => saveCache(file, c))).toThrow('stopped');
      const kept = JSON.parse(readFileSync(file, 'utf8')) as Record<string, CachedResult>;
      expect(Object.values(kept).map((r) => r.line)).toEqual([1, 2]);
      expect(readdirSync(dir)).toEqual(['lua-mutants.json']);
      const rerun: number[] = [];
      const results = judgeMutants(
        mutants,
        kept,
        current(),
        (m) => (rerun.push(m.line), { ...tested('survived'), line: m.line }),
        (c) => saveCache(file, c),
      );
      expect(rerun).toEqual([3, 4]);
      expect(results.map((r) => r.status)).toEqual(['killed', 'killed', 'survived', 'survived']);
      expect(Object.keys(JSON.parse(readFileSync(file, 'utf8')) as object)).toHaveLength(4);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
