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

  it('has one entry per .lua file, with its exact source and SHA1', () => {
    const files = readdirSync(scriptsDir)
      .filter((f) => f.endsWith('.lua'))
      .sort();
    expect(ALL_SCRIPTS.map((s) => `${s.name}.lua`).sort()).toEqual(files);
    for (const script of ALL_SCRIPTS) {
      const source = readFileSync(join(scriptsDir, `${script.name}.lua`), 'utf8');
      expect(script.source).toBe(source);
      expect(script.sha).toBe(createHash('sha1').update(source).digest('hex'));
      expect(Object.isFrozen(script)).toBe(true);
    }
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
