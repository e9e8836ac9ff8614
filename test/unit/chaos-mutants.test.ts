import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { coreSourceDir, regenerateScripts } from '../../chaos/harness/mutant-build';
import { applyPatch, MUTANTS } from '../../chaos/harness/mutants';
import { NEMESIS_NAMES } from '../../chaos/harness/nemeses';
import { encodeCommand, RespRequestParser } from '../../chaos/harness/resp';

const core = coreSourceDir(process.cwd());
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('mutants', () => {
  it.each(MUTANTS.map((m) => [m.name, m] as const))('%s: every patch finds its target in the current core, and changes it', (_, mutant) => {
    for (const patch of mutant.patches) {
      const source = readFileSync(join(core, patch.file), 'utf8');
      const patched = applyPatch(source, patch, mutant.name);
      expect(patched).not.toBe(source);
      expect(patched).toContain(patch.replace);
    }
    for (const nemesis of mutant.nemeses) expect(NEMESIS_NAMES).toContain(nemesis);
  });

  it('a patch whose target is gone (or found too often) fails loudly', () => {
    expect(() => applyPatch('return a;', { file: 'x.ts', find: 'return b;', replace: 'return c;' }, 'demo')).toThrow(
      /expected 1 occurrence.*found 0/,
    );
    expect(() => applyPatch('a a', { file: 'x.ts', find: 'a', replace: 'b' }, 'demo')).toThrow(/found 2/);
    expect(applyPatch('a a', { file: 'x.ts', find: 'a', replace: 'b', count: 2 }, 'demo')).toBe('b b');
  });

  it('regenerating the script module of an unpatched copy changes nothing; a patched script gets its own SHA', () => {
    const dir = mkdtempSync(join(tmpdir(), 'chaos-mutant-test-'));
    dirs.push(dir);
    cpSync(core, dir, { recursive: true });
    const original = readFileSync(join(core, 'scripts', 'index.ts'), 'utf8');
    regenerateScripts(dir);
    expect(readFileSync(join(dir, 'scripts', 'index.ts'), 'utf8')).toBe(original);

    const mutant = MUTANTS.find((m) => m.name === 'release-plain-del')!;
    const patch = mutant.patches[0]!;
    const lua = join(dir, patch.file);
    writeFileSync(lua, applyPatch(readFileSync(lua, 'utf8'), patch, mutant.name));
    regenerateScripts(dir);
    const regenerated = readFileSync(join(dir, 'scripts', 'index.ts'), 'utf8');
    const sha = (text: string) => /name: "release",\n {2}sha: "([0-9a-f]{40})"/.exec(text)?.[1];
    expect(sha(regenerated)).toMatch(/^[0-9a-f]{40}$/);
    expect(sha(regenerated)).not.toBe(sha(original));
    // The generated module holds the script as a JSON string: its newlines are `\n` escapes.
    expect(regenerated).toContain("if value then\\n    redis.call('DEL', KEYS[i])");
  });
});

describe('RESP request parser (skew proxy)', () => {
  it('splits a byte stream into whole commands, across chunk boundaries, and re-encodes them identically', () => {
    const commands = [['EVALSHA', 'abc', '2', 'k1', 'k2', 'tok', '400'], ['PING'], ['SET', 'k', 'a\r\nb']].map((c) =>
      c.map((a) => Buffer.from(a)),
    );
    const bytes = Buffer.concat(commands.map(encodeCommand));
    const parser = new RespRequestParser();
    const seen: Buffer[][] = [];
    for (let i = 0; i < bytes.length; i += 7) seen.push(...parser.push(bytes.subarray(i, i + 7)));
    expect(seen.map((c) => c.map((a) => a.toString()))).toEqual(commands.map((c) => c.map((a) => a.toString())));
    expect(Buffer.concat(seen.map(encodeCommand)).equals(bytes)).toBe(true);
    expect(() => new RespRequestParser().push(Buffer.from('PING\r\n'))).toThrow(/not a RESP array/);
  });
});
