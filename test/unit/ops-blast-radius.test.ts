import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { gapFor, outcomeBinMs, outcomeSeries, sampled, GAP_MS } from '@/components/charts/series';
import { blastRadius, criticalCounts } from '@/components/nodes/blast-radius';
import { quorumView, type LockCell } from '@/lib/inspect';
import type { LockView } from '@/lib/api/locks';

const held = (node: number, token: string): LockCell => ({ node, known: true, present: true, token, pttlMs: 9_000, meta: null });
const absent = (node: number): LockCell => ({ node, known: true, present: false, token: null, pttlMs: null, meta: null });
const unknown = (node: number): LockCell => ({ node, known: false, present: false, token: null, pttlMs: null, meta: null });
const lock = (resource: string, cells: LockCell[]): LockView => ({
  ...quorumView(resource, `rl:lock:${resource}`, cells, { configuredNodes: 5 }),
});

describe('blast radius of taking one node out', () => {
  it('a lock on exactly a quorum loses its majority when one of its holders goes', () => {
    const locks = [lock('a', [held(1, 'T'), held(2, 'T'), held(3, 'T'), absent(4), absent(5)])];
    const r = blastRadius(locks, 1, new Set(), 3);
    expect(r.losing.map((l) => l.resource)).toEqual(['a']);
    expect(r.losing[0]).toMatchObject({ before: 3, after: 2, holders: [1, 2, 3] });
    expect(blastRadius(locks, 4, new Set(), 3).losing).toEqual([]);
  });

  it('a lock on every node survives one loss, not once two others are already out', () => {
    const locks = [lock('a', [held(1, 'T'), held(2, 'T'), held(3, 'T'), held(4, 'T'), held(5, 'T')])];
    expect(blastRadius(locks, 1, new Set(), 3)).toMatchObject({ losing: [], surviving: 1 });
    expect(blastRadius(locks, 1, new Set([4, 5]), 3).losing.map((l) => l.resource)).toEqual(['a']);
  });

  it('a node that already cannot answer costs nothing more; locks already below quorum are counted apart', () => {
    const locks = [lock('a', [held(1, 'T'), held(2, 'T'), held(3, 'T'), absent(4), absent(5)])];
    expect(blastRadius(locks, 1, new Set([1]), 3)).toMatchObject({ losing: [], surviving: 0, alreadyBelow: 0 });
    expect(blastRadius(locks, 1, new Set([2]), 3)).toMatchObject({ losing: [], alreadyBelow: 1 });
  });

  it('only the majority token counts; unread cells and locks without a majority are left out', () => {
    const locks = [
      lock('minority-here', [held(1, 'X'), held(2, 'T'), held(3, 'T'), held(4, 'T'), absent(5)]),
      lock('split', [held(1, 'A'), held(2, 'A'), held(3, 'B'), held(4, 'B'), absent(5)]),
      lock('unread', [held(1, 'T'), held(2, 'T'), held(3, 'T'), unknown(4), unknown(5)]),
    ];
    const r = blastRadius(locks, 1, new Set(), 3);
    expect(r.losing.map((l) => l.resource)).toEqual(['unread']);
    expect(r.checked).toBe(2);
  });

  it('property: a lock is lost exactly when its reachable majority holders include the target and number exactly a quorum', () => {
    const cellArb = (node: number) =>
      fc.oneof(fc.constant(held(node, 'T')), fc.constant(held(node, 'U')), fc.constant(absent(node)), fc.constant(unknown(node)));
    fc.assert(
      fc.property(
        fc.array(fc.tuple(cellArb(1), cellArb(2), cellArb(3), cellArb(4), cellArb(5)), { maxLength: 20 }),
        fc.integer({ min: 1, max: 5 }),
        fc.subarray([1, 2, 3, 4, 5]),
        (rows, target, out) => {
          const locks = rows.map((cells, i) => lock(`r${i}`, cells));
          const unavailable = new Set(out);
          const r = blastRadius(locks, target, unavailable, 3);
          const counts = criticalCounts(locks, [1, 2, 3, 4, 5], unavailable, 3);
          for (const l of locks) {
            const holders =
              l.majorityToken === null
                ? []
                : l.cells.filter((c) => c.known && c.present && c.token === l.majorityToken && !unavailable.has(c.node)).map((c) => c.node);
            const lost = holders.includes(target) && holders.length === 3;
            expect(r.losing.some((x) => x.resource === l.resource)).toBe(lost);
          }
          // The per-node count on the Nodes screen agrees with the dialog.
          expect(counts.get(target)!.critical).toBe(r.losing.length);
        },
      ),
    );
  });
});

describe('chart series', () => {
  it('breaks a sampled line inside gaps longer than GAP_MS instead of drawing across them', () => {
    const pts = [
      { t: 0, v: 1 },
      { t: 1_000, v: 2 },
      { t: 1_000 + GAP_MS + 1_000, v: 3 },
    ];
    const out = sampled(pts, (t) => ({ t, v: null as number | null }));
    expect(out).toEqual([
      { t: 0, v: 1 },
      { t: 1_000, v: 2 },
      { t: 2_000, v: null },
      { t: 1_000 + GAP_MS + 1_000, v: 3 },
    ]);
  });

  it('one-minute buckets (windows past 10 minutes): a gap is three buckets, a blank one bucket after the last reading', () => {
    const m = 60_000;
    const pts = [
      { t: 0, v: 1 },
      { t: 3 * m, v: 2 },
      { t: 7 * m, v: 3 },
    ];
    expect(gapFor(m)).toBe(3 * m);
    expect(sampled(pts, (t) => ({ t, v: null as number | null }), gapFor(m), m)).toEqual([
      { t: 0, v: 1 },
      { t: 3 * m, v: 2 },
      { t: 4 * m, v: null },
      { t: 7 * m, v: 3 },
    ]);
    // A 24 h window reads in 20-minute bars, summing 20 one-minute buckets each.
    expect(outcomeBinMs({ start: 0, end: 86_400_000, bucketMs: m })).toBe(20 * m);
  });

  it('outcome bars: measured zeros after the first bucket, nothing before it, sums per bin', () => {
    const b = (t: number, ok: number, failed = 0) => ({
      t,
      acquireOk: ok,
      acquireFailed: failed,
      grantsSeen: null,
      p50Ms: null,
      p99Ms: null,
      rttMs: null,
      locks: null,
      byState: null,
    });
    const buckets = [b(10_000, 1), b(11_000, 2, 1), b(14_000, 3)];
    const w = { start: 0, end: 15_000, bucketMs: 1_000 };
    const perSecond = outcomeSeries(buckets, w, 1_000);
    expect(perSecond.find((p) => p.t === 9_000)).toEqual({ t: 9_000, ok: null, failed: null });
    expect(perSecond.find((p) => p.t === 12_000)).toEqual({ t: 12_000, ok: 0, failed: 0 });
    const perFive = outcomeSeries(buckets, w, 5_000);
    expect(perFive).toEqual([
      { t: 0, ok: null, failed: null },
      { t: 5_000, ok: null, failed: null },
      { t: 10_000, ok: 6, failed: 1 },
      { t: 15_000, ok: 0, failed: 0 },
    ]);
  });
});
