import { describe, expect, it } from 'vitest';
import { assembleKeySegments, assembleStateSegments, type NodeSample } from '@/lib/scenarios/timeline';
import { RunRecord } from '@/lib/scenarios/record';

const key = (client: string, token: string, pttl: number, resource = 'r') => ({ resource, client, token, pttl });
const sample = (t: number, node: number, keys: NodeSample['keys'], ok = true): NodeSample => ({ t, node, ok, keys });

describe('timeline assembly: node samples → key segments', () => {
  it('one token seen with a steady expiry is one segment; it ends where it was last seen or vanished (never after its expiry)', () => {
    const segs = assembleKeySegments([
      sample(100, 1, [key('A', 'ta', 2_000)]),
      sample(220, 1, [key('A', 'ta', 1_880)]),
      sample(340, 1, [key('A', 'ta', 1_761)]),
      sample(460, 1, []),
    ]);
    expect(segs).toEqual([{ node: 1, resource: 'r', client: 'A', token: 'ta', from: 100, to: 460, expiresAt: 2_101, open: false }]);
  });

  it('a key that ran out between two samples ends at its expiry', () => {
    const segs = assembleKeySegments([sample(0, 1, [key('A', 'ta', 50)]), sample(120, 1, [])]);
    expect(segs[0]).toMatchObject({ from: 0, to: 50, open: false });
  });

  it('a new token, or a jump in expiry (extension, drift), starts a new segment', () => {
    const segs = assembleKeySegments([
      sample(0, 2, [key('A', 'ta', 3_000)]),
      sample(120, 2, [key('A', 'ta', 2_000)]), // drift: expiry moved 880 ms earlier
      sample(240, 2, [key('B', 'tb', 3_000)]),
    ]);
    expect(segs.map((s) => [s.client, s.from, s.to, s.expiresAt, s.open])).toEqual([
      ['A', 0, 120, 3_000, false],
      ['A', 120, 240, 2_120, false],
      ['B', 240, 240, 3_240, true],
    ]);
  });

  it('nodes and resources are tracked apart; an unreadable node ends its segments where they were last seen', () => {
    const segs = assembleKeySegments([
      sample(0, 1, [key('A', 'ta', 1_000), key('P', 'tp', 1_000, 'probe')]),
      sample(0, 2, [key('A', 'ta', 1_000)]),
      sample(120, 2, [], false),
      sample(120, 1, [key('A', 'ta', 880)]),
    ]);
    expect(segs.map((s) => [s.node, s.resource, s.to, s.open])).toEqual([
      [1, 'probe', 120, false],
      [1, 'r', 120, true],
      [2, 'r', 0, false],
    ]);
  });

  it('samples may arrive out of order (one read per node in flight): they are sorted by time first', () => {
    const segs = assembleKeySegments([sample(240, 1, []), sample(0, 1, [key('A', 'ta', 1_000)]), sample(120, 1, [key('A', 'ta', 880)])]);
    expect(segs).toHaveLength(1);
    expect(segs[0]).toMatchObject({ from: 0, to: 240, open: false });
  });
});

describe('timeline assembly: node states', () => {
  it('merges repeated observations and closes each segment where the next begins', () => {
    const segs = assembleStateSegments([
      { t: 0, node: 3, state: 'up', detail: 'aof-always' },
      { t: 300, node: 3, state: 'up', detail: 'aof-always' },
      { t: 310, node: 3, state: 'down', detail: 'persistence none' },
      { t: 600, node: 3, state: 'up', detail: 'none' },
      { t: 0, node: 1, state: 'slow', detail: '+600 ms round trip' },
    ]);
    expect(segs).toEqual([
      { node: 1, from: 0, to: null, state: 'slow', detail: '+600 ms round trip' },
      { node: 3, from: 0, to: 310, state: 'up', detail: 'aof-always' },
      { node: 3, from: 310, to: 600, state: 'down', detail: 'persistence none' },
      { node: 3, from: 600, to: null, state: 'up', detail: 'none' },
    ]);
  });

  it('the run record keeps only changes of state, and its timeline view carries segments, beliefs and writes', () => {
    const record = new RunRecord([], ['r']);
    record.state(0, 1, 'up', 'aof-always');
    record.state(100, 1, 'up', 'aof-always');
    record.state(200, 1, 'down', '');
    expect(record.states).toHaveLength(2);
    record.sample(sample(0, 1, [key('A', 'ta', 1_000)]));
    record.beliefs.push({ client: 'A', resource: 'r', from: 5, validUntil: 985, to: null, fence: 9, stale: false, ended: 'open' });
    const view = record.timeline(300);
    expect(view.now).toBe(300);
    expect(view.keys).toEqual([{ node: 1, resource: 'r', client: 'A', from: 0, to: 0, expiresAt: 1_000, open: true }]);
    expect(view.nodeStates.map((s) => s.state)).toEqual(['up', 'down']);
    expect(view.beliefs[0]).toMatchObject({ client: 'A', to: null, fence: 9 });
  });
});
