import { describe, expect, it } from 'vitest';
import { FencedRegister, PlainRegister } from '@/lib/scenarios/registers';
import { RunRecord } from '@/lib/scenarios/record';

const w = (client: string, fence: number | null, value: string) => ({ t: 0, client, resource: 'r', fence, value });

describe('storage registers', () => {
  it('the plain register takes every write: the last writer wins, stale or not', () => {
    const plain = new PlainRegister();
    plain.write(w('B', 7, 'B'));
    expect(plain.write(w('A', 3, 'A (stale)'))).toMatchObject({ accepted: true });
    expect(plain.value).toBe('A (stale)');
    expect(plain.accepted).toBe(2);
  });

  it('the fenced register takes a write only if its fence is at least the highest seen', () => {
    const fenced = new FencedRegister();
    expect(fenced.write(w('A', 3, 'A1'))).toMatchObject({ accepted: true });
    expect(fenced.write(w('A', 3, 'A2'))).toMatchObject({ accepted: true }); // the same holder again: equal fence
    expect(fenced.write(w('B', 7, 'B1'))).toMatchObject({ accepted: true });
    expect(fenced.write(w('A', 3, 'A3'))).toEqual({ accepted: false, reason: 'fence 3 < highest seen 7' });
    expect(fenced.write(w('C', null, 'C'))).toEqual({ accepted: false, reason: 'no fencing token' });
    expect(fenced).toMatchObject({ value: 'B1', highest: 7, accepted: 3, rejected: 2 });
  });

  it('fences as large as the lock core issues them (now × 1000) compare exactly', () => {
    const fenced = new FencedRegister();
    const base = 1_795_240_249_279_001;
    fenced.write(w('B', base + 1, 'B'));
    expect(fenced.write(w('A', base, 'A')).accepted).toBe(false);
  });

  it('a run writes to both: the record keeps each write with both verdicts', () => {
    const record = new RunRecord([], ['r']);
    record.write({ ...w('A', 1, 'A: draft'), t: 10 });
    record.write({ ...w('B', 2, 'B: final'), t: 20 });
    const stale = record.write({ ...w('A', 1, 'A: stale'), t: 30 });
    expect(stale).toMatchObject({ unfenced: 'accepted', fenced: 'rejected' });
    expect(record.plain.value).toBe('A: stale');
    expect(record.fenced.value).toBe('B: final');
    expect(record.writes.map((x) => x.fenced)).toEqual(['accepted', 'accepted', 'rejected']);
  });
});
