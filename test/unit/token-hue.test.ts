import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { lockHues, TOKEN_HUES, tokenHue } from '../../components/locks/token';

/** Red, on the oklch wheel the token chips use: the colour of errors on this console. */
const isRed = (hue: number) => hue >= 330 || hue < 40;

describe('token hues', () => {
  it('never colours a token red, and any two hues are far enough apart to tell apart', () => {
    for (const hue of TOKEN_HUES) expect(isRed(hue), `hue ${hue}`).toBe(false);
    const sorted = [...TOKEN_HUES].sort((a, b) => a - b);
    for (let i = 1; i < sorted.length; i++) expect(sorted[i]! - sorted[i - 1]!).toBeGreaterThanOrEqual(20);
  });

  it('gives a token the same hue every time, and spreads random tokens over every hue', () => {
    const seen = new Map<number, number>();
    for (let i = 0; i < 12_000; i++) {
      const token = randomBytes(20).toString('base64url');
      const hue = tokenHue(token);
      expect(tokenHue(token)).toBe(hue);
      expect(isRed(hue), `${token} → ${hue}`).toBe(false);
      seen.set(hue, (seen.get(hue) ?? 0) + 1);
    }
    expect([...seen.keys()].sort((a, b) => a - b)).toEqual([...TOKEN_HUES].sort((a, b) => a - b));
    // Roughly even: no hue takes more than twice its share.
    for (const count of seen.values()) expect(count).toBeLessThan(2_000);
  });

  it("gives one lock's tokens different hues, the same whatever the order they are listed in", () => {
    for (let round = 0; round < 500; round++) {
      const tokens = Array.from({ length: 2 + (round % 11) }, () => randomBytes(20).toString('base64url'));
      const hues = lockHues(tokens);
      expect(new Set(hues.values()).size, tokens.join(',')).toBe(tokens.length);
      expect(lockHues([...tokens].reverse())).toEqual(hues);
    }
    const one = randomBytes(20).toString('base64url');
    expect(lockHues([one, one]).get(one)).toBe(tokenHue(one));
  });
});
