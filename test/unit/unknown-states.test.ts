import { describe, expect, it } from 'vitest';
import type { NodesResponse, NodeView } from '../../lib/api/nodes';
import { isStale, staleAfterMs } from '../../lib/client/freshness';
import { headlineUnknown, mastersReading, nodeList } from '../../lib/client/masters-reading';
import { grantableAt, quarantineEndsAt } from '../../components/nodes/quarantine-clock';
import { grantKnowledge, grantSeries } from '../../components/charts/series';

/** "could not read" is never judged "fine", stale has one definition, one countdown source. */
const node = (id: number, up: boolean, extra: Partial<NodeView> = {}) => ({ id, up, process: 'up', ...extra }) as NodeView;
const NOW = 1_000_000;

describe('the masters reading behind the live dot and the headlines', () => {
  it('every master unread is "unread", some is "partial", an old reading "stale", the console silent "offline"', () => {
    const all = [1, 2, 3, 4, 5].map((id) => node(id, true));
    const frozen = [1, 2, 3, 4, 5].map((id) => node(id, false));
    expect(mastersReading({ nodes: all, receivedAt: NOW - 500, failing: false, now: NOW }).state).toBe('read');
    const unread = mastersReading({ nodes: frozen, receivedAt: NOW - 500, failing: false, now: NOW });
    expect(unread).toMatchObject({ state: 'unread', answered: 0, total: 5, reason: 'Nodes 1–5 could not be read' });
    const some = [node(1, true), node(2, false), node(3, true), node(4, false), node(5, true)];
    expect(mastersReading({ nodes: some, receivedAt: NOW - 500, failing: false, now: NOW })).toMatchObject({
      state: 'partial',
      answered: 3,
      reason: 'Nodes 2 and 4 could not be read',
    });
    expect(mastersReading({ nodes: all, receivedAt: NOW - staleAfterMs() - 1, failing: false, now: NOW }).state).toBe('stale');
    expect(mastersReading({ nodes: all, receivedAt: NOW - 500, failing: true, now: NOW }).state).toBe('offline');
    expect(mastersReading({ nodes: undefined, receivedAt: 0, failing: false, now: NOW }).state).toBe('pending');
  });

  it('stale is older than two poll intervals, never sooner than 5 s', () => {
    expect(staleAfterMs(1_000)).toBe(5_000);
    expect(staleAfterMs(15_000)).toBe(30_000);
    expect(isStale(NOW - 5_000, NOW)).toBe(false);
    expect(isStale(NOW - 5_001, NOW)).toBe(true);
    expect(isStale(null, NOW)).toBe(true);
    expect(isStale(null, 0)).toBe(false); // server render
  });

  it('a headline is unknown when stale, offline or nothing answered, but not when the supervisor knows the masters are down', () => {
    const frozen = [1, 2, 3].map((id) => node(id, false));
    const crashed = [1, 2, 3].map((id) => node(id, false, { process: 'down' }));
    const unread = mastersReading({ nodes: frozen, receivedAt: NOW, failing: false, now: NOW });
    expect(headlineUnknown(unread, frozen)).toBe(true);
    expect(headlineUnknown(mastersReading({ nodes: crashed, receivedAt: NOW, failing: false, now: NOW }), crashed)).toBe(false);
    const fine = [1, 2, 3].map((id) => node(id, true));
    expect(headlineUnknown(mastersReading({ nodes: fine, receivedAt: NOW, failing: false, now: NOW }), fine)).toBe(false);
    expect(headlineUnknown(mastersReading({ nodes: fine, receivedAt: NOW, failing: true, now: NOW }), fine)).toBe(true);
    expect(headlineUnknown(mastersReading({ nodes: fine, receivedAt: NOW - 60_000, failing: false, now: NOW }), fine)).toBe(true);
  });

  it('names node lists as people read them', () => {
    expect(nodeList([3])).toBe('Node 3');
    expect(nodeList([1, 2, 3, 4, 5])).toBe('Nodes 1–5');
    expect(nodeList([4, 1, 3])).toBe('Nodes 1, 3 and 4');
  });
});

describe('one countdown source per screen', () => {
  it('"grantable in" ends with the quarantine that completes the quorum, counted from that node\'s own reading, not the answer\'s readAt', () => {
    const q = (remainingMs: number) => ({ state: 'quarantined', remainingMs }) as NodeView['quarantine'];
    // Read 3.5 s before the answer (a cached check): readAt + remaining would be 3.5 s late.
    const nodes = [
      node(1, true, { usable: true, checkedAt: NOW }),
      node(2, true, { usable: true, checkedAt: NOW }),
      node(3, true, { usable: false, checkedAt: NOW - 3_500, quarantine: q(42_400) }),
      node(4, true, { usable: false, checkedAt: NOW - 3_500, quarantine: q(50_000) }),
      node(5, true, { usable: false, checkedAt: NOW, quarantine: q(60_000) }),
    ];
    const data = {
      readAt: NOW,
      nodes,
      verdict: { canGrant: false, usable: 2, quorum: 3, grantableInMs: 42_400, configuredNodes: 5, up: 5, reasons: [] },
    } as unknown as NodesResponse;
    expect(quarantineEndsAt(nodes[2]!, 0)).toBe(NOW - 3_500 + 42_400);
    expect(grantableAt(data, 0)).toBe(quarantineEndsAt(nodes[2]!, 0));
    expect(grantableAt(data, 250)).toBe(NOW - 3_500 + 42_400 + 250);
    expect(quarantineEndsAt(nodes[0]!, 0)).toBeNull();
  });
});

describe('grants seen on the masters, per bin', () => {
  it('a bin before the counting began is null (not counted), a bin with no grants after it is 0', () => {
    const b = (t: number, grantsSeen: number | null) => ({
      t,
      acquireOk: 0,
      acquireFailed: 0,
      grantsSeen,
      p50Ms: null,
      p99Ms: null,
      rttMs: null,
      locks: null,
      byState: null,
    });
    const series = grantSeries([b(10_000, null), b(11_000, 4), b(13_000, 2)], { start: 0, end: 14_000, bucketMs: 1_000 }, 1_000);
    expect(series.find((p) => p.t === 10_000)).toEqual({ t: 10_000, seen: null });
    expect(series.find((p) => p.t === 11_000)).toEqual({ t: 11_000, seen: 4 });
    expect(series.find((p) => p.t === 12_000)).toEqual({ t: 12_000, seen: 0 });
    expect(series.find((p) => p.t === 13_000)).toEqual({ t: 13_000, seen: 2 });
  });
});

describe('grants while no master can be read', () => {
  const b = (t: number, grantsSeen: number | null, rttMs: Array<number | null> | null = null) => ({
    t,
    acquireOk: 0,
    acquireFailed: 0,
    grantsSeen,
    p50Ms: null,
    p99Ms: null,
    rttMs,
    locks: null,
    byState: null,
  });
  const READ = [1, 1, 1];
  const FROZEN = [null, null, null];

  it('from a reading that found no master answering until one that finds one, a bin is unknown, not 0', () => {
    const w = { start: 0, end: 16_000, bucketMs: 1_000 };
    const buckets = [b(10_000, 0, READ), b(11_000, 2), b(12_000, 0, FROZEN), b(14_000, 0, FROZEN), b(15_000, 0, READ)];
    const series = grantSeries(buckets, w, 1_000);
    expect(series.find((p) => p.t === 11_000)).toEqual({ t: 11_000, seen: 2 });
    // Frozen from 12 s (the counter running, so the buckets say 0): nothing could have reached it.
    for (const t of [12_000, 13_000, 14_000]) expect(series.find((p) => p.t === t)).toEqual({ t, seen: null, unread: true });
    expect(series.find((p) => p.t === 15_000)).toEqual({ t: 15_000, seen: 0 });
    expect(grantKnowledge(series)).toEqual({ known: 4, unread: 3 }); // 10, 11, 15 and 16 s
  });

  it('a window read from no master at all knows nothing: the chart may not say "no grants"', () => {
    const w = { start: 0, end: 14_000, bucketMs: 1_000 };
    const series = grantSeries([b(8_000, 0, FROZEN), b(11_000, 0, FROZEN), b(13_000, 0, FROZEN)], w, 1_000).filter((p) => p.t >= 8_000);
    expect(series.every((p) => p.seen === null && p.unread)).toBe(true);
    expect(grantKnowledge(series)).toEqual({ known: 0, unread: series.length });
  });
});
