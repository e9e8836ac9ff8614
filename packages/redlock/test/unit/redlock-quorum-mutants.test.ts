import { describe, expect, it } from 'vitest';
import { jitteredDelayMs } from '../../src/quorum';

// Survivors of `npm run mutation` on quorum.ts (docs/mutation.md): the retry delay's mapping from
// the random draw. Not a safety path (retry spacing is liveness: the split-vote livelock), killed
// because the tests are one line each. The third survivor (`r > 0` for `r >= 0`) is equivalent:
// r = 0 gives unit 0 either way.
describe('jittered delay, exactly', () => {
  it('maps the draw uniformly onto the range: the middle draw is the middle of the range', () => {
    // [90, 110], 21 values: 0.5 × 21 = 10.5 → 90 + 10. (high + low + 1 would give 190, clamped to 110.)
    expect(jitteredDelayMs(100, 10, () => 0.5)).toBe(100);
    expect(jitteredDelayMs(100, 10, () => 0.25)).toBe(95);
  });

  it('a negative draw from a broken random source is treated as 0, never a delay below the range', () => {
    expect(jitteredDelayMs(200, 100, () => -0.5)).toBe(100);
    expect(jitteredDelayMs(200, 100, () => -1e-9)).toBe(100);
  });

  it('a draw of 1 or more from a broken random source is treated as 0 too, not as the top of the range', () => {
    // `r < 1` for [0, 1): a draw of exactly 1 read as a unit would give high + 1, clamped to high.
    expect(jitteredDelayMs(200, 100, () => 1)).toBe(100);
    expect(jitteredDelayMs(200, 100, () => 1.5)).toBe(100);
  });
});
