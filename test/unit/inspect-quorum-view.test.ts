import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  LockGrouper,
  quorumSize,
  quorumView,
  type LockCell,
  type NodeReading,
  type QuorumOptions,
  type QuorumView,
  type ScannedLock,
} from '@/lib/inspect';

/** Per-node readings grouped by key into quorum views, sorted by resource (what the scanner does, fed at once). */
function groupQuorumViews(readings: readonly NodeReading[], options: QuorumOptions): QuorumView[] {
  const grouper = new LockGrouper(readings.length);
  readings.forEach((reading, index) => {
    if (!reading.ok) return;
    for (const l of reading.keys) grouper.add(index, l.key, l.token, l.pttlMs, l.meta, l.metaRead ?? l.meta !== null, 0, l.resource);
  });
  return grouper.views(readings, options);
}

const present = (node: number, token: string, pttlMs: number, meta: Record<string, string> | null = null): LockCell => ({
  node,
  known: true,
  present: true,
  token,
  pttlMs,
  meta,
});
const absent = (node: number): LockCell => ({ node, known: true, present: false, token: null, pttlMs: null, meta: null });
const unknown = (node: number): LockCell => ({ node, known: false, present: false, token: null, pttlMs: null, meta: null });
const view = (
  cells: LockCell[],
  configuredNodes = 5,
  extra: { driftFactor?: number; expiringThresholdMs?: number; maxTtlMs?: number } = {},
) => quorumView('orders:1', 'rl:lock:orders:1', cells, { configuredNodes, ...extra });

describe('quorum view classification', () => {
  it('held: one token on every node; validity is the quorum-th largest PTTL minus the drift allowance', () => {
    const v = view([
      present(1, 'A', 10_000),
      present(2, 'A', 9_000),
      present(3, 'A', 8_000),
      present(4, 'A', 7_000),
      present(5, 'A', 6_000),
    ]);
    expect(v).toMatchObject({ state: 'held', majorityToken: 'A', holders: 5, tokens: 1, quorum: 3 });
    // 3rd largest of 10 000, 9 000, 8 000, … = 8 000; drift = 8 000 × 0.01 + 2 = 82.
    expect(v.validityMs).toBe(7_918);
  });

  it('held on exactly a quorum: validity is the smallest majority PTTL minus drift', () => {
    const v = view([present(1, 'A', 5_000), absent(2), present(3, 'A', 4_000), absent(4), present(5, 'A', 4_500)]);
    expect(v.state).toBe('held');
    expect(v.holders).toBe(3);
    expect(v.validityMs).toBe(Math.floor(4_000 - (4_000 * 0.01 + 2)));
  });

  it('expiring: a majority token with validity at or below the threshold (a parameter)', () => {
    const cells = [present(1, 'A', 1_500), present(2, 'A', 1_500), present(3, 'A', 1_500), absent(4), absent(5)];
    expect(view(cells).state).toBe('expiring');
    expect(view(cells, 5, { expiringThresholdMs: 1_000 }).state).toBe('held');
  });

  it('partial: one token on fewer than a quorum of the configured nodes', () => {
    const v = view([present(1, 'A', 9_000), present(2, 'A', 9_000), absent(3), absent(4), absent(5)]);
    expect(v).toMatchObject({ state: 'partial', majorityToken: null, holders: 2, tokens: 1, validityMs: null });
  });

  it('split: two tokens, neither with a majority', () => {
    const v = view([present(1, 'A', 9_000), present(2, 'A', 9_000), present(3, 'B', 9_000), present(4, 'B', 9_000), absent(5)]);
    expect(v).toMatchObject({ state: 'split', majorityToken: null, holders: 2, tokens: 2, validityMs: null });
  });

  it('a majority token with a leftover of another is held, and counts both tokens', () => {
    const v = view([present(1, 'A', 9_000), present(2, 'A', 9_000), present(3, 'A', 9_000), present(4, 'B', 9_000), absent(5)]);
    expect(v).toMatchObject({ state: 'held', majorityToken: 'A', holders: 3, tokens: 2 });
  });

  it('the quorum is of the configured nodes, not of the nodes read: unknown cells never help', () => {
    const v = view([present(1, 'A', 9_000), present(2, 'A', 9_000), unknown(3), unknown(4), unknown(5)]);
    expect(v.state).toBe('partial');
    expect(v.unknownNodes).toEqual([3, 4, 5]);
    // Two cells read, but five configured: two is not a majority.
    expect(quorumView('r', 'k', [present(1, 'A', 9_000), present(2, 'A', 9_000)], { configuredNodes: 5 }).state).toBe('partial');
    expect(quorumView('r', 'k', [present(1, 'A', 9_000), present(2, 'A', 9_000)], { configuredNodes: 3 }).state).toBe('held');
  });

  it('a held lock whose voter is down is held, not partial, with the down node named', () => {
    // Granted on nodes 1-3 of 5, node 3 then crashed: 2 read, 1 down, no other token anywhere.
    const v = view([present(1, 'A', 9_000), present(2, 'A', 8_000), unknown(3), absent(4), absent(5)]);
    expect(v).toMatchObject({ state: 'held', majorityToken: 'A', holders: 2, quorum: 3, unknownNodes: [3] });
    // Its validity counts only on the keys read: the smaller PTTL, less the drift allowance.
    expect(v.validityMs).toBe(Math.floor(8_000 - (8_000 * 0.01 + 2)));
    // Not when another token is seen, nor when the nodes read are not a quorum themselves.
    expect(view([present(1, 'A', 9_000), present(2, 'A', 9_000), unknown(3), present(4, 'B', 9_000), absent(5)]).state).toBe('split');
    expect(view([present(1, 'A', 9_000), unknown(2), unknown(3), unknown(4), absent(5)]).state).toBe('partial');
    // Nor two voters short of a quorum.
    expect(view([present(1, 'A', 9_000), unknown(2), unknown(3), absent(4), absent(5)]).state).toBe('partial');
    // A leftover on one node with every other node read stays partial.
    expect(view([present(1, 'A', 9_000), absent(2), absent(3), absent(4), unknown(5)]).state).toBe('partial');
  });

  it('flags keys without a TTL; a quorum without TTL has no finite validity', () => {
    const v = view([present(1, 'A', -1), present(2, 'A', -1), present(3, 'A', -1), present(4, 'A', 5_000), absent(5)]);
    expect(v.noTtlNodes).toEqual([1, 2, 3]);
    expect(v.state).toBe('held');
    expect(v.validityMs).toBeNull();
    const one = view([present(1, 'A', -1), present(2, 'A', 5_000), present(3, 'A', 5_000), absent(4), absent(5)]);
    expect(one.noTtlNodes).toEqual([1]);
    expect(one.validityMs).toBe(Math.floor(5_000 - 52));
  });

  it('flags keys whose PTTL is above the lease ceiling (a client that does not keep it), never a key without TTL twice', () => {
    const cells = [present(1, 'A', 45_000), present(2, 'A', 30_000), present(3, 'A', 29_999), present(4, 'A', -1), absent(5)];
    const v = view(cells, 5, { maxTtlMs: 30_000 });
    expect(v.overCeilingNodes).toEqual([1]);
    expect(v.noTtlNodes).toEqual([4]);
    expect(v.state).toBe('held');
    // Without a ceiling nothing is checked.
    expect(view(cells).overCeilingNodes).toEqual([]);
  });

  it('counts flagged locks beside the states, for the overview', () => {
    const grouper = new LockGrouper(2);
    const reading = (node: number): NodeReading => ({ node, ok: true, error: null, keys: [] }) as unknown as NodeReading;
    grouper.add(0, 'rl:lock:a', 'T', 90_000, null, true, 0, 'a');
    grouper.add(1, 'rl:lock:a', 'T', 90_000, null, true, 0, 'a');
    grouper.add(0, 'rl:lock:b', 'U', -1, null, true, 0, 'b');
    grouper.add(0, 'rl:lock:c', 'V', 1_000, null, true, 0, 'c');
    const { flagCounts, stateCounts } = grouper.viewList([reading(1), reading(2)], { configuredNodes: 2, maxTtlMs: 30_000 });
    expect(flagCounts).toEqual({ noTtl: 1, overCeiling: 1 });
    expect(Object.values(stateCounts).reduce((a, b) => a + b, 0)).toBe(3);
  });

  it('takes metadata and the fence from a majority holder, not from a leftover', () => {
    const v = view([
      present(1, 'B', 9_000, { owner: 'old', fence: '3' }),
      present(2, 'A', 9_000, { owner: 'new', fence: '7' }),
      present(3, 'A', 9_000),
      present(4, 'A', 9_000),
      absent(5),
    ]);
    expect(v.meta).toEqual({ owner: 'new', fence: '7' });
    expect(v.fence).toBe(7);
    expect(view([present(1, 'A', 1_000, { owner: 'x', fence: 'n/a' }), absent(2), absent(3), absent(4), absent(5)]).fence).toBeNull();
  });

  it("takes the majority token's metadata from a node whose copy has the fence (the fence round writes it on the confirmers only)", () => {
    const v = view([
      present(1, 'A', 9_000, { owner: 'o' }),
      present(2, 'A', 9_000, { owner: 'o' }),
      present(3, 'A', 9_000, { owner: 'o', fence: '12' }),
      present(4, 'A', 9_000, { owner: 'o', fence: '12' }),
      absent(5),
    ]);
    expect(v.meta).toEqual({ owner: 'o', fence: '12' });
    expect(v.fence).toBe(12);
    // A minority leftover's fence never wins over the majority's copies without one.
    const w = view([
      present(1, 'B', 9_000, { fence: '99' }),
      present(2, 'A', 9_000, { owner: 'o' }),
      present(3, 'A', 9_000),
      present(4, 'A', 9_000),
      absent(5),
    ]);
    expect(w.meta).toEqual({ owner: 'o' });
    expect(w.fence).toBeNull();
  });

  it("takes the highest fence among the majority's copies: a proposal that did not stand is below the fence issued, on the nodes the fence round did not ask", () => {
    const v = view([
      present(1, 'A', 9_000, { owner: 'o', fence: '1795977437713002' }),
      present(2, 'A', 9_000, { owner: 'o', fence: '1795977437713002' }),
      present(3, 'A', 9_000, { owner: 'o', fence: '1795977437713190' }),
      present(4, 'A', 9_000, { owner: 'o', fence: '1795977437713190' }),
      present(5, 'A', 9_000, { owner: 'o', fence: '1795977437713190' }),
    ]);
    expect(v.fence).toBe(1795977437713190);
  });

  it('lists cells in node order whatever order they came in', () => {
    const v = view([absent(3), present(1, 'A', 9_000), present(2, 'A', 9_000)]);
    expect(v.cells.map((c) => c.node)).toEqual([1, 2, 3]);
  });
});

describe('grouping readings into views', () => {
  const lock = (key: string, token: string, pttlMs = 9_000, meta: Record<string, string> | null = null): ScannedLock => ({
    key,
    resource: key.replace(/^rl:lock:/, ''),
    token,
    pttlMs,
    meta,
  });

  it('groups by key across nodes, sorts by resource, and keeps unknown nodes unknown', () => {
    const views = groupQuorumViews(
      [
        { node: 1, ok: true, keys: [lock('rl:lock:b', 'T'), lock('rl:lock:a', 'S', 9_000, { owner: 'o' })] },
        { node: 2, ok: true, keys: [lock('rl:lock:a', 'S'), lock('rl:lock:a', 'S')] }, // SCAN may repeat a key
        { node: 3, ok: false, keys: [lock('rl:lock:c', 'U')] },
      ],
      { configuredNodes: 3 },
    );
    expect(views.map((v) => v.resource)).toEqual(['a', 'b']); // c is only on an unreadable node
    expect(views[0]).toMatchObject({ state: 'held', holders: 2, unknownNodes: [3], meta: { owner: 'o' } });
    expect(views[0]!.cells.map((c) => [c.node, c.known, c.present])).toEqual([
      [1, true, true],
      [2, true, true],
      [3, false, false],
    ]);
    // One short of a quorum of 3 with its other node unreadable: held, the down node named.
    expect(views[1]).toMatchObject({ state: 'held', holders: 1, quorum: 2, unknownNodes: [3] });
  });
});

describe('LockGrouper', () => {
  const readings = [
    { node: 1, ok: true },
    { node: 2, ok: true },
    { node: 3, ok: false },
  ];

  it('ages PTTLs from when each batch was read to when the views are made', () => {
    const g = new LockGrouper(3, 'rl:lock:');
    g.add(0, 'rl:lock:a', 'T', 5_000, null, false, 1_000);
    g.add(1, 'rl:lock:a', 'T', 4_000, null, false, 1_500);
    g.add(0, 'rl:lock:b', 'U', -1, null, false, 1_000);
    g.add(1, 'rl:lock:b', 'U', 100, null, false, 1_000);
    const [a, b] = g.views(readings, { configuredNodes: 3 }, 3_000);
    expect(a!.resource).toBe('a');
    expect(a!.cells.map((c) => c.pttlMs)).toEqual([3_000, 2_500, null]);
    expect(b!.cells.map((c) => c.pttlMs)).toEqual([-1, 0, null]); // no TTL stays −1; the past is 0
    expect(g.counts).toEqual([2, 2, 0]);
  });

  it('asks for metadata only where no readable node read it, from a holder of the most common token', () => {
    const g = new LockGrouper(4, 'rl:lock:');
    g.add(0, 'rl:lock:read', 'T', 1, null, true); // read there: none exists
    g.add(1, 'rl:lock:read', 'T', 1, null, false);
    g.add(0, 'rl:lock:unread', 'X', 1, null, false); // a leftover: not the one to ask
    g.add(1, 'rl:lock:unread', 'T', 1, null, false);
    g.add(2, 'rl:lock:unread', 'T', 1, null, false);
    g.add(3, 'rl:lock:unread', 'T', 1, { owner: 'o' }, true); // read, but reading 4 failed
    g.add(0, 'bare-key', 'T', 1, null, false); // not our layout: no metadata to read
    expect(g.metaWanted([true, true, true, false]).map((w) => [w.key, w.reading])).toEqual([['rl:lock:unread', 1]]);
    expect(g.metaWanted([true, true, true, true])).toEqual([]);
  });
});

// ─── properties ────────────────────────────────────────────────────────────────────────────────

const cellsArb = fc
  .integer({ min: 1, max: 7 })
  .chain((n) =>
    fc.tuple(
      fc.constant(n),
      fc.array(
        fc.record({
          known: fc.integer({ min: 0, max: 9 }).map((x) => x > 0),
          present: fc.boolean(),
          token: fc.constantFrom('A', 'B', 'C'),
          pttlMs: fc.oneof(fc.constant(-1), fc.integer({ min: 0, max: 120_000 })),
          withMeta: fc.boolean(),
        }),
        { minLength: n, maxLength: n },
      ),
      fc.double({ min: 0, max: 0.1, noNaN: true }),
      fc.integer({ min: 0, max: 10_000 }),
    ),
  )
  .map(([n, raw, driftFactor, expiringThresholdMs]) => ({
    n,
    driftFactor,
    expiringThresholdMs,
    cells: raw.map((r, i): LockCell => {
      if (!r.known) return unknown(i + 1);
      if (!r.present) return absent(i + 1);
      return present(i + 1, r.token, r.pttlMs, r.withMeta ? { owner: `o${i + 1}`, fence: String(i + 1) } : null);
    }),
  }));

const classify = (c: { n: number; driftFactor: number; expiringThresholdMs: number; cells: LockCell[] }, cells = c.cells) =>
  quorumView('r', 'k', cells, { configuredNodes: c.n, driftFactor: c.driftFactor, expiringThresholdMs: c.expiringThresholdMs });

describe('quorum view properties', () => {
  it('held/expiring ⇒ a token on at least a quorum; otherwise no token has a quorum', () => {
    fc.assert(
      fc.property(cellsArb, (c) => {
        const v = classify(c);
        const q = quorumSize(c.n);
        const counts = new Map<string, number>();
        for (const cell of c.cells) if (cell.known && cell.present) counts.set(cell.token!, (counts.get(cell.token!) ?? 0) + 1);
        const max = Math.max(0, ...counts.values());
        expect(v.tokens).toBe(counts.size);
        if (v.state === 'held' || v.state === 'expiring') {
          // On a quorum, or (a voter down) on every node read that a quorum needs, the nodes read a quorum themselves.
          const unread = c.cells.filter((cell) => !cell.known).length;
          if (v.holders < q) {
            expect(v.holders + unread).toBeGreaterThanOrEqual(q);
            expect(unread).toBeLessThanOrEqual(c.n - q);
            expect(v.tokens).toBe(1);
          }
          expect(counts.get(v.majorityToken!)).toBe(v.holders);
        } else {
          expect(v.majorityToken).toBeNull();
          expect(max).toBeLessThan(q);
        }
        if (v.state === 'split') expect(v.tokens).toBeGreaterThanOrEqual(2);
        if (v.state === 'partial') expect(v.tokens).toBeLessThanOrEqual(1);
      }),
      { numRuns: 500 },
    );
  });

  it('validity: a quorum of majority nodes hold the key at least that long, it never exceeds the largest PTTL, and expiring ⇔ validity ≤ threshold', () => {
    fc.assert(
      fc.property(cellsArb, (c) => {
        const v = classify(c);
        if (v.majorityToken === null) {
          expect(v.validityMs).toBeNull();
          return;
        }
        const pttls = c.cells.filter((x) => x.known && x.present && x.token === v.majorityToken).map((x) => x.pttlMs!);
        if (v.validityMs === null) {
          // Only when a quorum of the majority's keys never expire.
          expect(pttls.filter((p) => p === -1).length).toBeGreaterThanOrEqual(Math.min(v.quorum, v.holders));
          expect(v.state).toBe('held');
          return;
        }
        expect(v.validityMs).toBeGreaterThanOrEqual(0);
        // Every holder read, when a voter is down and they are one short of a quorum.
        expect(pttls.filter((p) => p === -1 || p >= v.validityMs!).length).toBeGreaterThanOrEqual(Math.min(v.quorum, v.holders));
        expect(v.validityMs).toBeLessThanOrEqual(Math.max(...pttls.filter((p) => p >= 0), 0));
        expect(v.state === 'expiring').toBe(v.validityMs <= c.expiringThresholdMs);
      }),
      { numRuns: 500 },
    );
  });

  it('is invariant under permuting the node order', () => {
    fc.assert(
      fc.property(cellsArb, fc.integer(), (c, seed) => {
        const shuffled = [...c.cells];
        let s = seed;
        for (let i = shuffled.length - 1; i > 0; i--) {
          s = (s * 1103515245 + 12345) | 0;
          const j = Math.abs(s) % (i + 1);
          [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
        }
        expect(classify(c, shuffled)).toEqual(classify(c));
      }),
      { numRuns: 300 },
    );
  });

  it('flags exactly the present keys without a TTL, and exactly the unknown nodes', () => {
    fc.assert(
      fc.property(cellsArb, (c) => {
        const v = classify(c);
        expect(v.noTtlNodes).toEqual(c.cells.filter((x) => x.known && x.present && x.pttlMs === -1).map((x) => x.node));
        expect(v.unknownNodes).toEqual(c.cells.filter((x) => !x.known).map((x) => x.node));
      }),
      { numRuns: 300 },
    );
  });
});
