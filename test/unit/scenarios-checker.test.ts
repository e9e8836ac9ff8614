import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkMutualExclusion, type Belief } from '@/lib/scenarios/checker';
import { RunRecord } from '@/lib/scenarios/record';

const belief = (client: string, from: number, to: number | null, validUntil = to ?? Number.POSITIVE_INFINITY, resource = 'r'): Belief => ({
  client,
  resource,
  from,
  to,
  validUntil,
});

describe('mutual-exclusion checker (over what clients believe)', () => {
  it('one holder after another is fine, touching ends included', () => {
    const result = checkMutualExclusion([belief('A', 0, 1_000), belief('B', 1_000, 2_000)], 3_000);
    expect(result.ok).toBe(true);
    expect(result.resources).toEqual([{ resource: 'r', ok: true, holders: 0, limit: 1, overlaps: [] }]);
  });

  it('two clients at once: red, with the overlap and whether both were inside their validity', () => {
    const result = checkMutualExclusion([belief('A', 0, 3_000, 2_900), belief('B', 1_000, 4_000, 3_900)], 5_000);
    expect(result.ok).toBe(false);
    expect(result.resources[0]!.overlaps).toEqual([
      { resource: 'r', clients: ['A', 'B'], from: 1_000, to: 3_000, open: false, bothValid: true },
    ]);
  });

  it('a paused client believing past its validity overlaps, but not both validly (the fencing case)', () => {
    const result = checkMutualExclusion([belief('A', 0, 3_500, 1_950), belief('B', 2_100, 4_000, 4_000)], 5_000);
    expect(result.resources[0]!.overlaps[0]).toMatchObject({ from: 2_100, to: 3_500, bothValid: false });
  });

  it('open beliefs run to now and are reported as open; current holders are counted', () => {
    const result = checkMutualExclusion([belief('A', 0, null, 5_000), belief('B', 500, null, 6_000)], 1_200);
    expect(result.resources[0]!.overlaps[0]).toMatchObject({ from: 500, to: 1_200, open: true });
    expect(result.resources[0]!.holders).toBe(2);
  });

  it('the same client twice is never a violation; resources are checked apart and listed even when unused', () => {
    const result = checkMutualExclusion([belief('A', 0, 2_000), belief('A', 1_000, 3_000), belief('B', 500, 900, 900, 'other')], 4_000, [
      'r',
      'other',
      'unused',
    ]);
    expect(result.ok).toBe(true);
    expect(result.resources.map((r) => r.resource)).toEqual(['r', 'other', 'unused']);
  });

  it("property: it reports an overlap exactly when two clients' intervals intersect with positive length", () => {
    const interval = fc.tuple(fc.integer({ min: 0, max: 1_000 }), fc.integer({ min: 1, max: 1_000 }));
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom('A', 'B', 'C'), interval), { maxLength: 6 }), (items) => {
        const beliefs = items.map(([client, [from, len]]) => belief(client, from, from + len));
        const result = checkMutualExclusion(beliefs, 10_000);
        let expected = false;
        for (let i = 0; i < beliefs.length; i++) {
          for (let j = i + 1; j < beliefs.length; j++) {
            const a = beliefs[i]!;
            const b = beliefs[j]!;
            if (a.client !== b.client && Math.min(a.to!, b.to!) > Math.max(a.from, b.from)) expected = true;
          }
        }
        expect(result.ok).toBe(!expected);
        for (const o of result.resources[0]?.overlaps ?? []) expect(o.to).toBeGreaterThan(o.from);
      }),
    );
  });
});

describe('a semaphore of `limit` permits: more than `limit` holders at once is the violation', () => {
  const limits = { r: 2 };

  it('two holders of two permits are fine; a third at once is red, one finding per stretch with the same holders', () => {
    const two = checkMutualExclusion([belief('A', 0, 3_000), belief('B', 500, 4_000)], 5_000, ['r'], limits);
    expect(two.resources).toEqual([{ resource: 'r', ok: true, holders: 0, limit: 2, overlaps: [] }]);
    const three = checkMutualExclusion(
      [belief('A', 0, 3_000, 2_900), belief('B', 500, 4_000, 3_900), belief('C', 1_000, 5_000, 4_900), belief('D', 3_500, 6_000)],
      7_000,
      ['r'],
      limits,
    );
    expect(three.ok).toBe(false);
    // A, B and C from C's grant to A's end; then B, C and D once D comes (A gone, still three).
    expect(three.resources[0]!.overlaps).toEqual([
      { resource: 'r', clients: ['A', 'B', 'C'], from: 1_000, to: 3_000, open: false, bothValid: true },
      { resource: 'r', clients: ['B', 'C', 'D'], from: 3_500, to: 4_000, open: false, bothValid: true },
    ]);
    // Two holders at once, checked as a lock (no limit given): red.
    expect(checkMutualExclusion([belief('A', 0, 3_000), belief('B', 500, 4_000)], 5_000).ok).toBe(false);
  });

  it('a third holder past its validity is reported, but not as the protocol breaking; open beliefs run to now', () => {
    const stale = checkMutualExclusion(
      [belief('A', 0, 3_000, 1_000), belief('B', 500, 4_000), belief('C', 2_000, 4_000)],
      5_000,
      ['r'],
      limits,
    );
    expect(stale.resources[0]!.overlaps).toEqual([
      { resource: 'r', clients: ['A', 'B', 'C'], from: 2_000, to: 3_000, open: false, bothValid: false },
    ]);
    const open = checkMutualExclusion(
      [belief('A', 0, null, 9_000), belief('B', 0, null, 9_000), belief('C', 700, null, 9_000)],
      1_200,
      ['r'],
      limits,
    );
    expect(open.resources[0]).toMatchObject({ holders: 3, overlaps: [{ clients: ['A', 'B', 'C'], from: 700, to: 1_200, open: true }] });
  });

  it('counts permits, not clients: one client believing it holds two, and another, is three holders of two', () => {
    const r = checkMutualExclusion(
      [belief('A', 0, null, 5_000), belief('A', 10, null, 5_000), belief('B', 20, null, 5_000)],
      1_000,
      ['r'],
      limits,
    );
    expect(r.resources[0]).toMatchObject({ ok: false, overlaps: [{ clients: ['A', 'A', 'B'], bothValid: true }] });
  });

  it('property: red exactly when at some moment more than `limit` permits are believed held', () => {
    const interval = fc.tuple(fc.integer({ min: 0, max: 1_000 }), fc.integer({ min: 1, max: 1_000 }));
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 3 }),
        fc.array(fc.tuple(fc.constantFrom('A', 'B', 'C', 'D', 'E'), interval), { maxLength: 8 }),
        (limit, items) => {
          const beliefs = items.map(([client, [from, len]]) => belief(client, from, from + len));
          const result = checkMutualExclusion(beliefs, 10_000, ['r'], { r: limit });
          // Over-holding can only start at a belief's start: count the permits believed there.
          const expected = beliefs.some((b) => beliefs.filter((x) => x.from <= b.from && x.to! > b.from).length > limit);
          expect(result.ok).toBe(!expected);
          for (const o of result.resources[0]!.overlaps) {
            expect(o.to).toBeGreaterThan(o.from);
            expect(o.clients.length).toBeGreaterThan(limit);
          }
        },
      ),
    );
  });
});

describe('beliefs end at the validity, unless the client was paused then', () => {
  it('settle: a running client stops believing at its validity end; a paused one keeps believing (stale)', () => {
    const record = new RunRecord([], ['r']);
    record.pausedAt = (client, t) => client === 'A' && t >= 1_000;
    record.beliefs.push({ client: 'A', resource: 'r', from: 0, validUntil: 2_000, to: null, fence: 1, stale: false, ended: 'open' });
    record.beliefs.push({ client: 'B', resource: 'r', from: 0, validUntil: 1_500, to: null, fence: 2, stale: false, ended: 'open' });
    record.settle(1_000);
    expect(record.beliefs.map((b) => b.to)).toEqual([null, null]);
    record.settle(2_500);
    expect(record.beliefs[0]).toMatchObject({ to: null, stale: true, ended: 'open' });
    expect(record.beliefs[1]).toMatchObject({ to: 1_500, stale: false, ended: 'expired' });
    record.endBelief('A', 'r', 3_000, 'released');
    expect(record.beliefs[0]).toMatchObject({ to: 3_000, stale: true, ended: 'released' });
  });

  it('a release just after the validity ran out does not stretch the belief past it', () => {
    const record = new RunRecord([], ['r']);
    record.beliefs.push({ client: 'A', resource: 'r', from: 0, validUntil: 1_000, to: null, fence: 1, stale: false, ended: 'open' });
    expect(record.endBelief('A', 'r', 1_004, 'released')).toBeUndefined();
    expect(record.beliefs[0]).toMatchObject({ to: 1_000, stale: false, ended: 'expired' });
  });
});
