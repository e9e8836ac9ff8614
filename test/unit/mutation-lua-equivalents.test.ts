import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mutantId, scriptHashOf, sha, type Current } from '../../scripts/mutation/lua-cache';
import {
  EQUIVALENTS_PATH,
  loadEquivalents,
  parseEquivalents,
  splitEquivalents,
  staleEquivalents,
  standingEquivalent,
  type Equivalent,
} from '../../scripts/mutation/lua-equivalents';
import { mutantsOf } from '../../scripts/mutation/lua-operators';
import { LUA_TESTS } from '../../scripts/mutation/lua-tests';

// A Lua mutant shown equivalent is not tested again while its script is the one the argument was
// made about; once the script changes it is tested as any other, and the entry is named stale.

const scripts: Record<string, string> = {
  'x.lua': 'local s = string.sub(ARGV[1], 1, 3)\n--@include _shared.lua\nreturn s\n',
  '_shared.lua': 'local n = 1\n',
};
const read =
  (edits: Record<string, string> = {}) =>
  (f: string) =>
    ({ ...scripts, ...edits })[f]!;
const now = (edits: Record<string, string> = {}): Current => ({
  script: 'x.lua',
  readScript: read(edits),
  set: { quick: ['x-mutants'], full: ['x-mutants'] },
  read: () => '',
});
const files: Record<string, string> = { 'src/caller.ts': 'export const start = 1;\n' };
const readFile =
  (edits: Record<string, string> = {}) =>
  (p: string) => {
    const text = { ...files, ...edits }[p];
    if (text === undefined) throw new Error(`no ${p}`);
    return text;
  };
const rf = readFile();
const sub0 = { file: 'x.lua', line: 1, replacement: '  local s = string.sub(ARGV[1], 0, 3)' };
const entry = (over: Partial<Equivalent> = {}): Equivalent => ({
  file: 'x.lua',
  line: 1,
  replacement: sub0.replacement.trim(),
  scriptHash: scriptHashOf('x.lua', read()),
  why: "Lua's string.sub reads a start of 0 as 1",
  ...over,
});

describe('lua-equivalents: which mutants are not tested again', () => {
  it('an entry stands for its mutant while the script (with what it includes) is unchanged', () => {
    expect(standingEquivalent([entry()], sub0, now(), rf)).toEqual(entry());
    // Another mutant of the same line is tested.
    expect(standingEquivalent([entry()], { ...sub0, replacement: 'local s = string.sub(ARGV[1], 2, 3)' }, now(), rf)).toBeUndefined();
    // The script changed, or the snippet it includes: the argument may not hold, the mutant is tested.
    expect(standingEquivalent([entry()], sub0, now({ 'x.lua': `${scripts['x.lua']}-- more\n` }), rf)).toBeUndefined();
    expect(standingEquivalent([entry()], sub0, now({ '_shared.lua': 'local n = 2\n' }), rf)).toBeUndefined();
    // An entry of another script never stands for this one's mutant.
    expect(standingEquivalent([entry({ file: 'y.lua' })], sub0, now(), rf)).toBeUndefined();
  });

  it('splitEquivalents keeps the others to judge and names the entries that no longer stand', () => {
    const other = { file: 'x.lua', line: 3, replacement: 'return nil' };
    const kept = splitEquivalents([entry()], [sub0, other], now(), rf);
    expect(kept.judged).toEqual([other]);
    expect(kept.skipped).toEqual([entry()]);
    expect(kept.stale).toEqual([]);
    const changed = splitEquivalents([entry()], [sub0, other], now({ '_shared.lua': 'local n = 2\n' }), rf);
    expect(changed.judged).toEqual([sub0, other]);
    expect(changed.skipped).toEqual([]);
    expect(changed.stale).toEqual([entry()]);
    // A mutant the operators no longer write (its line moved): stale too.
    expect(staleEquivalents([entry({ line: 2 })], [sub0], now(), rf)).toEqual([entry({ line: 2 })]);
  });

  it('an argument that rests on a file outside the script stands only while that file reads as it did', () => {
    const dep = entry({ dependsOn: { 'src/caller.ts': sha(files['src/caller.ts']!) } });
    expect(standingEquivalent([dep], sub0, now(), rf)).toEqual(dep);
    const changed = readFile({ 'src/caller.ts': 'export const start = 0;\n' });
    expect(standingEquivalent([dep], sub0, now(), changed)).toBeUndefined();
    expect(staleEquivalents([dep], [sub0], now(), changed)).toEqual([dep]);
    // A file gone: no longer stands either.
    const gone = (p: string) => {
      throw new Error(`no ${p}`);
    };
    expect(standingEquivalent([dep], sub0, now(), gone)).toBeUndefined();
    expect(() => parseEquivalents(JSON.stringify([{ ...dep, dependsOn: { 'src/caller.ts': 'x' } }]))).toThrow(/entry 0/);
  });

  it('a malformed entry is an error, not a mutant silently skipped or tested', () => {
    expect(() => parseEquivalents('{}')).toThrow(/array/);
    expect(() => parseEquivalents(JSON.stringify([{ ...entry(), why: '' }]))).toThrow(/entry 0/);
    expect(() => parseEquivalents(JSON.stringify([{ ...entry(), scriptHash: 'abc' }]))).toThrow(/entry 0/);
    expect(() => parseEquivalents(JSON.stringify([{ ...entry(), line: '1' }]))).toThrow(/entry 0/);
    expect(parseEquivalents(JSON.stringify([entry()]))).toEqual([entry()]);
  });

  it("the project's list: every entry names a mutant the operators write today, of today's script, with a reason", () => {
    const root = join(import.meta.dirname, '..', '..');
    const dir = join(root, 'packages/redlock/src/scripts');
    const readScript = (f: string) => readFileSync(join(dir, f), 'utf8');
    const list = loadEquivalents(join(root, EQUIVALENTS_PATH));
    expect(list.length).toBeGreaterThan(0);
    for (const file of new Set(list.map((e) => e.file))) {
      const current: Current = { script: file, readScript, set: LUA_TESTS[file]!, read: () => '' };
      // A script changed since its entries were argued: examine them again, then update or remove
      // them. (A changed file an argument depends on is not held here: the runner names the entry
      // stale and tests its mutant again, so an edit to a caller does not fail this test.)
      const scriptOnly = list.map((e) => ({ ...e, dependsOn: undefined }));
      expect(
        staleEquivalents(scriptOnly, mutantsOf(file, readScript(file)), current, () => ''),
        file,
      ).toEqual([]);
    }
    // Every file an argument depends on exists.
    for (const path of new Set(list.flatMap((e) => Object.keys(e.dependsOn ?? {})))) expect(existsSync(join(root, path)), path).toBe(true);
    // One entry per mutant.
    const ids = list.map((e) => mutantId(e));
    expect(new Set(ids).size).toBe(ids.length);
  });
});
