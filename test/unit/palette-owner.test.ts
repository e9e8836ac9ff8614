import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { STATE_INFO, stateColor } from '../../components/locks/lock-state';
import { toneColor } from '../../components/ui/palette';

const ROOT = join(__dirname, '../..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

describe('one palette', () => {
  it('gives each lock state the tone of STATE_INFO, the same for every screen and chart', () => {
    expect(stateColor('held')).toBe(toneColor('ok'));
    expect(stateColor('expiring')).toBe(toneColor('warn'));
    expect(stateColor('partial')).toBe(toneColor('info'));
    expect(stateColor('split')).toBe(toneColor('bad'));
    for (const [state, info] of Object.entries(STATE_INFO)) expect(stateColor(state as keyof typeof STATE_INFO)).toBe(toneColor(info.tone));
  });

  it('has no screen or chart naming a tone colour of its own: they all go through components/ui/palette.ts', () => {
    const offenders = ['app', 'components', 'lib']
      .flatMap((dir) => sources(join(ROOT, dir)))
      .filter((file) => !file.endsWith(join('components', 'ui', 'palette.ts')))
      .filter((file) => /var\(--(ok|warn|info|bad)\)/.test(readFileSync(file, 'utf8')))
      .map((file) => relative(ROOT, file));
    expect(offenders).toEqual([]);
  });
});
