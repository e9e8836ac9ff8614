import { describe, expect, it } from 'vitest';
import { assembleKeySegments, assembleQuarantineSegments, assembleStateSegments, type NodeSample } from '@/lib/scenarios/timeline';
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

describe('timeline assembly: quarantines read from the nodes', () => {
  const q = (t: number, node: number, until: number | null, cause = 'restart', ok = true): NodeSample => ({
    t,
    node,
    ok,
    keys: [],
    quarantine: until === null ? null : { until, cause },
  });

  it('readings of one quarantine (same end, within the jitter) are one segment, from the first that showed it to its end as last read', () => {
    const segs = assembleQuarantineSegments([q(0, 3, null), q(120, 3, 4_100), q(240, 3, 4_090), q(360, 3, 4_110), q(4_200, 3, null)]);
    expect(segs).toEqual([{ node: 3, from: 120, to: 4_110, cause: 'restart', open: false }]);
  });

  it('a quarantine ended early (marked clean) is cut at the reading that no longer shows it; one still running is open', () => {
    const segs = assembleQuarantineSegments([q(0, 2, 5_000, 'data-loss'), q(500, 2, null), q(0, 4, 3_000), q(120, 4, 3_000)]);
    expect(segs).toEqual([
      { node: 2, from: 0, to: 500, cause: 'data-loss', open: false },
      { node: 4, from: 0, to: 3_000, cause: 'restart', open: true },
    ]);
  });

  it('a new end is a new quarantine; an unreadable node says nothing; samples without a sentinel reading are ignored', () => {
    const segs = assembleQuarantineSegments([
      q(0, 1, 2_000),
      q(120, 1, 0, 'x', false),
      { t: 240, node: 1, ok: true, keys: [] },
      q(360, 1, 2_000),
      q(2_500, 1, 9_000, 'eviction'),
      q(2_620, 1, 9_010, 'eviction'),
    ]);
    expect(segs).toEqual([
      { node: 1, from: 0, to: 2_000, cause: 'restart', open: false },
      { node: 1, from: 2_500, to: 9_010, cause: 'eviction', open: true },
    ]);
  });

  it("the run record's timeline view carries the quarantine segments", () => {
    const record = new RunRecord([], ['r']);
    record.sample(q(100, 5, 4_000));
    expect(record.timeline(200).quarantines).toEqual([{ node: 5, from: 100, to: 4_000, cause: 'restart', open: true }]);
  });
});
