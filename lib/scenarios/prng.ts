/**
 * A small seeded PRNG (mulberry32): the same seed gives the same choices, so a run can be
 * reproduced. Only the engine's own choices use it (which nodes fail, who sits near which node);
 * the lock core's retry jitter is its own (Math.random), as in any real client.
 */
export interface Prng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform whole number in [min, max]. */
  int(min: number, max: number): number;
  /** A shuffled copy. */
  shuffle<T>(items: readonly T[]): T[];
}

export function createPrng(seed: number): Prng {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    shuffle: (items) => {
      const out = items.slice();
      for (let i = out.length - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1));
        [out[i], out[j]] = [out[j]!, out[i]!];
      }
      return out;
    },
  };
}

/** A fresh random seed for a run that was not given one. */
export function randomSeed(): number {
  return Math.floor(Math.random() * 4_294_967_296) >>> 0;
}
