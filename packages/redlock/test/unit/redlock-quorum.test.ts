import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { blockingSize, driftMs, jitteredDelayMs, quorumSize, validityHorizonMs, validityMs } from '../../src/quorum';

const nodeCount = fc.integer({ min: 1, max: 9 });
const driftFactor = fc.double({ min: 0, max: 0.49, noNaN: true });
const ttl = fc.integer({ min: 1, max: 86_400_000 });

/** A subset of {0…n−1} as a bit mask. */
const subsetOf = (n: number) => fc.integer({ min: 0, max: 2 ** n - 1 });
const size = (mask: number) => mask.toString(2).replaceAll('0', '').length;

describe('quorum size', () => {
  it('is ⌊N/2⌋+1 for N = 1…9', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9].map(quorumSize)).toEqual([1, 2, 2, 3, 3, 4, 4, 5, 5]);
  });

  it('any two sets of at least a quorum of nodes intersect (N = 1…9)', () => {
    fc.assert(
      fc.property(
        nodeCount.chain((n) => fc.tuple(fc.constant(n), subsetOf(n), subsetOf(n))),
        ([n, a, b]) => {
          fc.pre(size(a) >= quorumSize(n) && size(b) >= quorumSize(n));
          expect(a & b).not.toBe(0);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('exhaustively, for every N = 1…9, no two disjoint quorums exist and a smaller threshold would allow them', () => {
    for (let n = 1; n <= 9; n++) {
      const q = quorumSize(n);
      for (let a = 0; a < 2 ** n; a++) {
        if (size(a) < q) continue;
        const complement = (2 ** n - 1) & ~a;
        expect(size(complement)).toBeLessThan(q);
      }
      // q − 1 is not enough (for N ≥ 2): two disjoint sets of q − 1 fit.
      if (n >= 2) expect(2 * (q - 1)).toBeLessThanOrEqual(n);
    }
  });

  it('a blocking set (N − quorum + 1 holders elsewhere) leaves fewer than a quorum', () => {
    fc.assert(
      fc.property(nodeCount, (n) => {
        expect(n - blockingSize(n)).toBeLessThan(quorumSize(n));
        expect(n - (blockingSize(n) - 1)).toBeGreaterThanOrEqual(quorumSize(n));
      }),
    );
  });
});

describe('validity', () => {
  it('is ttl − elapsed − (ttl·driftFactor + 2)', () => {
    expect(driftMs(10_000, 0.01)).toBe(102);
    expect(validityMs(10_000, 50, 0.01)).toBe(10_000 - 50 - 102);
    expect(validityHorizonMs(10_000, 0.01)).toBe(9_898);
  });

  it('decreases strictly as elapsed grows', () => {
    fc.assert(
      fc.property(
        ttl,
        driftFactor,
        fc.double({ min: 0, max: 1e7, noNaN: true }),
        fc.double({ min: 0.001, max: 1e6, noNaN: true }),
        (t, d, elapsed, more) => {
          expect(validityMs(t, elapsed + more, d)).toBeLessThan(validityMs(t, elapsed, d));
        },
      ),
    );
  });

  it('is never positive once elapsed ≥ ttl, nor at or past the horizon', () => {
    fc.assert(
      fc.property(ttl, driftFactor, fc.double({ min: 0, max: 1e7, noNaN: true }), (t, d, extra) => {
        expect(validityMs(t, t + extra, d)).toBeLessThanOrEqual(0);
        expect(validityMs(t, validityHorizonMs(t, d) + extra, d)).toBeLessThanOrEqual(1e-6);
      }),
    );
  });

  it('is always below the ttl (drift is at least 2 ms)', () => {
    fc.assert(
      fc.property(ttl, driftFactor, fc.double({ min: 0, max: 1e7, noNaN: true }), (t, d, elapsed) => {
        expect(validityMs(t, elapsed, d)).toBeLessThanOrEqual(t - 2);
      }),
    );
  });
});

describe('jittered delay', () => {
  it('stays within [max(0, delay − jitter), delay + jitter] and is a whole number', () => {
    fc.assert(
      fc.property(fc.nat(100_000), fc.nat(100_000), fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), (delay, jitter, r) => {
        const value = jitteredDelayMs(delay, jitter, () => r);
        expect(value).toBeGreaterThanOrEqual(Math.max(0, delay - jitter));
        expect(value).toBeLessThanOrEqual(delay + jitter);
        expect(Number.isInteger(value)).toBe(true);
      }),
    );
  });

  it('reaches both ends of the range, and survives a broken random source', () => {
    expect(jitteredDelayMs(200, 100, () => 0)).toBe(100);
    expect(jitteredDelayMs(200, 100, () => 0.999_999_9)).toBe(300);
    expect(jitteredDelayMs(200, 0, Math.random)).toBe(200);
    expect(jitteredDelayMs(50, 100, () => 0)).toBe(0);
    expect(jitteredDelayMs(200, 100, () => Number.NaN)).toBe(100);
    expect(jitteredDelayMs(200, 100, () => 7)).toBe(100);
  });

  it('spreads: 1,000 draws are not all equal', () => {
    const draws = new Set(Array.from({ length: 1_000 }, () => jitteredDelayMs(200, 100)));
    expect(draws.size).toBeGreaterThan(50);
  });
});
