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

  it('the fenced register takes a write only if its fence is above the highest seen, or equal to it from the same holder', () => {
    const fenced = new FencedRegister();
    expect(fenced.write(w('A', 3, 'A1'))).toMatchObject({ accepted: true });
    expect(fenced.write(w('A', 3, 'A2'))).toMatchObject({ accepted: true }); // the same holder again: equal fence
    expect(fenced.write(w('B', 7, 'B1'))).toMatchObject({ accepted: true });
    expect(fenced.write(w('A', 3, 'A3'))).toEqual({ accepted: false, reason: 'fence 3 < highest seen 7' });
    expect(fenced.write(w('C', null, 'C'))).toEqual({ accepted: false, reason: 'no fencing token' });
    expect(fenced).toMatchObject({ value: 'B1', highest: 7, accepted: 3, rejected: 2 });
  });

  it('an equal fence is accepted only from the holder that wrote with it: a tie between two holders is refused and reported', () => {
    const fenced = new FencedRegister();
    expect(fenced.write(w('B', 7, 'B: entry'))).toMatchObject({ accepted: true });
    expect(fenced.write(w('B', 7, 'B: entry 2'))).toMatchObject({ accepted: true, reason: 'fence 7 = highest seen, same holder' });
    const tie = fenced.write(w('A', 7, 'A: entry'));
    expect(tie).toMatchObject({ accepted: false, tie: { fence: 7, with: 'B' } });
    expect(tie.reason).toContain('two holders, one fence');
    expect(fenced).toMatchObject({ value: 'B: entry 2', highest: 7, holder: 'B', accepted: 2, rejected: 1 });
    expect(fenced.ties).toEqual([{ t: 0, fence: 7, clients: ['B', 'A'] }]);
    // A higher fence is accepted from anyone, and makes its writer the holder of the equal fence.
    expect(fenced.write(w('A', 8, 'A: entry 2'))).toMatchObject({ accepted: true });
    expect(fenced.write(w('B', 8, 'B: late'))).toMatchObject({ accepted: false, tie: { fence: 8, with: 'A' } });
  });

  it('a run reports a fence tie in its results and its log, not only in the write', () => {
    const record = new RunRecord([], ['r']);
    record.write({ ...w('B', 5, 'B: entry 1'), t: 10 });
    const second = record.write({ ...w('A', 5, 'A: entry 1'), t: 20 });
    expect(second).toMatchObject({ client: 'A', fenced: 'rejected' });
    expect(record.facts).toEqual([
      {
        id: 'fence-tie',
        label: 'Fence tie (two holders, one fence)',
        value: 'B and A both wrote with fence 5: the fenced store refused the second',
      },
    ]);
    expect(record.log.at(-1)).toMatchObject({ tone: 'bad', text: expect.stringContaining('Fence tie') });
    // No tie, no such fact.
    const clean = new RunRecord([], ['r']);
    clean.write({ ...w('A', 5, 'A'), t: 10 });
    clean.write({ ...w('A', 5, 'A again'), t: 20 });
    clean.write({ ...w('B', 6, 'B'), t: 30 });
    expect(clean.facts).toEqual([]);
    expect(clean.writes.map((x) => x.fenced)).toEqual(['accepted', 'accepted', 'accepted']);
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
