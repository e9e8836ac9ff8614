import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ALL_SCRIPTS } from '../../src/scripts';

const root = join(import.meta.dirname, '..', '..', '..', '..');
const scriptsDir = join(import.meta.dirname, '..', '..', 'src', 'scripts');

describe('generated Lua scripts (src/scripts/index.ts)', () => {
  it('is up to date with the .lua files (node scripts/gen-lua.mjs --check)', () => {
    const run = spawnSync(process.execPath, [join(root, 'scripts', 'gen-lua.mjs'), '--check'], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });

  it('has one entry per .lua file (snippets, _*.lua, excepted), with its exact source, includes expanded, and SHA1', () => {
    const files = readdirSync(scriptsDir)
      .filter((f) => f.endsWith('.lua') && !f.startsWith('_'))
      .sort();
    expect(ALL_SCRIPTS.map((s) => `${s.name}.lua`).sort()).toEqual(files);
    const expand = (file: string): string =>
      readFileSync(join(scriptsDir, file), 'utf8').replace(/^--@include (_[\w-]+\.lua)\n/gm, (_, snippet: string) => expand(snippet));
    for (const script of ALL_SCRIPTS) {
      const source = expand(`${script.name}.lua`);
      expect(script.source).toBe(source);
      expect(script.source).not.toMatch(/^--@include/m);
      expect(script.sha).toBe(createHash('sha1').update(source).digest('hex'));
      expect(Object.isFrozen(script)).toBe(true);
    }
  });

  it('the data-replacing commands have one owner (_replacing.lua), inlined in every script that records them', () => {
    const users = ALL_SCRIPTS.filter((s) => s.source.includes('replacingCalls()'));
    expect(users.map((s) => s.name).sort()).toEqual(['adopt-restart', 'mark-clean', 'probe']);
    for (const script of users) expect(script.source.match(/local REPLACING = /g)).toHaveLength(1);
    for (const file of readdirSync(scriptsDir).filter((f) => f.endsWith('.lua') && !f.startsWith('_')))
      expect(readFileSync(join(scriptsDir, file), 'utf8'), file).not.toMatch(/local REPLACING = /);
  });

  it('every script opens with a header listing KEYS, ARGV and the reply', () => {
    for (const script of ALL_SCRIPTS) {
      const header = script.source
        .split('\n')
        .filter((l) => l.startsWith('--'))
        .join('\n');
      expect(header, script.name).toMatch(/KEYS\[1/);
      expect(header, script.name).toMatch(/ARGV\[1/);
      expect(header, script.name).toMatch(/Reply:/);
    }
  });

  it('the lock core never reads .lua files at run time', () => {
    for (const file of readdirSync(join(import.meta.dirname, '..', '..', 'src')).filter((f) => f.endsWith('.ts'))) {
      const text = readFileSync(join(import.meta.dirname, '..', '..', 'src', file), 'utf8');
      expect(text, file).not.toMatch(/readFile|\.lua['"`]/);
    }
  });
});
