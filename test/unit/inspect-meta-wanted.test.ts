import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LockGrouper } from '@/lib/inspect/grouping';

/**
 * The live index asks its grouper, on every snapshot, which locks still lack their holder
 * metadata. After the first answer it only looks again at the groups changed since and at those
 * it named last time. Checked here against the answer of a grouper built afresh from the same
 * cells (which looks at everything), over random sequences of what the index does.
 */
const N = 3;
const PREFIX = 'p:lock:';
const KEYS = ['p:lock:a', 'p:lock:b', 'other'];
const TOKENS = ['t1', 't2', 't3'];

type Cell = { token: string; meta: Record<string, string> | null | undefined };
type Op =
  | { op: 'add'; reading: number; key: string; token: string; metaRead: boolean; withMeta: boolean }
  | { op: 'remove'; reading: number; key: string }
  | { op: 'clear'; reading: number }
  | { op: 'compact' }
  | { op: 'wanted'; readable: boolean[]; fill: boolean[] };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      op: fc.constant('add' as const),
      reading: fc.nat(N - 1),
      key: fc.constantFrom(...KEYS),
      token: fc.constantFrom(...TOKENS),
      metaRead: fc.boolean(),
      withMeta: fc.boolean(),
    }),
  },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('remove' as const), reading: fc.nat(N - 1), key: fc.constantFrom(...KEYS) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('clear' as const), reading: fc.nat(N - 1) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('compact' as const) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('wanted' as const),
      readable: fc.array(fc.boolean(), { minLength: N, maxLength: N }),
      fill: fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
    }),
  },
);

/** What a grouper that has never answered says about `model`: every group looked at. */
function fresh(model: Map<string, (Cell | undefined)[]>, readable: boolean[]): string[] {
  const g = new LockGrouper(N, PREFIX);
  for (const [key, cells] of model) {
    cells.forEach((cell, reading) => {
      if (cell) g.add(reading, key, cell.token, 10_000, cell.meta ?? null, cell.meta !== undefined);
    });
  }
  return g
    .metaWanted(readable)
    .map((w) => `${w.key}@${w.reading}:${w.token}`)
    .sort();
}

describe('LockGrouper.metaWanted, asked again and again', () => {
  it('names exactly what a grouper built afresh from the same cells would name', () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 5, maxLength: 80, size: 'max' }), (ops) => {
        let g = new LockGrouper(N, PREFIX);
        const model = new Map<string, (Cell | undefined)[]>();
        for (const step of ops) {
          if (step.op === 'add') {
            const meta = step.metaRead ? (step.withMeta ? { owner: step.token } : null) : undefined;
            g.add(step.reading, step.key, step.token, 10_000, meta ?? null, step.metaRead);
            const cells = model.get(step.key) ?? new Array<Cell | undefined>(N).fill(undefined);
            cells[step.reading] = { token: step.token, meta };
            model.set(step.key, cells);
          } else if (step.op === 'remove') {
            g.remove(step.reading, step.key);
            const cells = model.get(step.key);
            if (cells) cells[step.reading] = undefined;
          } else if (step.op === 'compact') {
            g = g.compacted(); // as the live index does once empty groups are the many
          } else if (step.op === 'clear') {
            g.clearReading(step.reading);
            for (const cells of model.values()) cells[step.reading] = undefined;
          } else {
            const wanted = g.metaWanted(step.readable);
            expect(wanted.map((w) => `${w.key}@${w.reading}:${w.token}`).sort()).toEqual(fresh(model, step.readable));
            // As fillMissingMeta does: some are found (with metadata or without), the rest stay missing.
            wanted.forEach((w, i) => {
              if (!step.fill[i % step.fill.length]) return;
              const meta = i % 2 === 0 ? { owner: 'filled' } : null;
              g.setMeta(w.group, w.reading, meta);
              model.get(w.key)![w.reading] = { token: w.token, meta };
            });
          }
        }
      }),
      { numRuns: 1_000 },
    );
  });

  it('a lock whose metadata could not be found is asked for again, and not once it is found', () => {
    const g = new LockGrouper(2, PREFIX);
    g.add(0, 'p:lock:a', 'tok', 10_000, null, false);
    g.add(1, 'p:lock:a', 'tok', 10_000, null, false);
    g.add(0, 'p:lock:b', 'tok', 10_000, { owner: 'x' }, true);
    expect(g.metaWanted([true, true]).map((w) => w.key)).toEqual(['p:lock:a']);
    expect(g.metaWanted([true, true]).map((w) => w.key)).toEqual(['p:lock:a']); // not found: asked again
    const [a] = g.metaWanted([true, true]);
    g.setMeta(a!.group, a!.reading, { owner: 'y' });
    expect(g.metaWanted([true, true])).toEqual([]);
    expect(g.metaWanted([false, true]).map((w) => [w.key, w.reading])).toEqual([['p:lock:a', 1]]); // b is held only where it cannot be read
  });

  it('a lock whose only node with the metadata lets the key go wants it from another', () => {
    const g = new LockGrouper(3, PREFIX);
    g.add(0, 'p:lock:a', 'tok', 10_000, { owner: 'o' }, true);
    g.add(1, 'p:lock:a', 'tok', 10_000, null, false);
    expect(g.metaWanted([true, true, true])).toEqual([]);
    g.remove(0, 'p:lock:a');
    expect(g.metaWanted([true, true, true]).map((w) => [w.key, w.reading, w.token])).toEqual([['p:lock:a', 1, 'tok']]);
  });
});
