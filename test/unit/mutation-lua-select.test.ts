import { describe, expect, it } from 'vitest';
import { inRanges, parseLineRange } from '../../scripts/mutation/lua-select';
import { mutantsOf } from '../../scripts/mutation/lua-operators';

// lua-mutants.ts --lines FROM-TO: a long script's mutants measured in parts.

describe('lua-mutants --lines', () => {
  it('reads FROM-TO and a single line', () => {
    expect(parseLineRange('81-127')).toEqual({ from: 81, to: 127 });
    expect(parseLineRange('5')).toEqual({ from: 5, to: 5 });
  });

  it('refuses what is not a range, with a message naming it', () => {
    for (const bad of ['', 'a-b', '10-', '-3', '0-4', '9-2', '1,2']) expect(() => parseLineRange(bad)).toThrow(/--lines/);
  });

  it('keeps the mutants on the given lines only, every mutant without a range', () => {
    const source = ['local a = 1', 'if a == 1 then', "  redis.call('SET', KEYS[1], a + 1)", 'end'].join('\n');
    const all = mutantsOf('x.lua', source);
    expect(new Set(all.map((m) => m.line))).toEqual(new Set([1, 2, 3]));
    expect(all.filter((m) => inRanges(m.line, [])).length).toBe(all.length);
    const kept = all.filter((m) => inRanges(m.line, [parseLineRange('2-2'), parseLineRange('3')]));
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.every((m) => m.line === 2 || m.line === 3)).toBe(true);
    expect(kept.length).toBe(all.filter((m) => m.line !== 1).length);
  });
});
