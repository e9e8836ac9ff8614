import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareLocks, LockGrouper, pageLocks, quorumView, type LockCell, type LockState, type QuorumView } from '@/lib/inspect';

/**
 * A snapshot's locks as a list that makes a view only when asked (lib/inspect/view-list.ts):
 * every view it makes, and every state it reports without making one, must be what classifying
 * the same cells directly gives, and must not follow the grouper's later changes.
 */
const N = 3;
const PREFIX = 'p:lock:';
const readings = [1, 2, 3].map((node) => ({ node, ok: true }));
const options = { configuredNodes: N, expiringThresholdMs: 3_000 };
const NOW = 10_000;

type Cell = { token: string; expiry: number; meta: Record<string, string> | null };
type Op =
  { op: 'add'; reading: number; key: string; token: string; pttl: number; meta: boolean } | { op: 'remove'; reading: number; key: string };

const keyArb = fc.constantFrom('p:lock:a', 'p:lock:b', 'p:lock:c', 'p:lock:a:1', 'other', 'p:lock:');
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      op: fc.constant('add' as const),
      reading: fc.nat(N - 1),
      key: keyArb,
      token: fc.constantFrom('t1', 't2'),
      pttl: fc.constantFrom(-1, 0, 500, 2_000, 9_000, 20_000),
      meta: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('remove' as const), reading: fc.nat(N - 1), key: keyArb }) },
);

/** Apply the ops to a grouper (readAt NOW − 5,000) and to a model of its cells. */
function apply(g: LockGrouper, model: Map<string, (Cell | undefined)[]>, ops: readonly Op[]): void {
  const readAt = NOW - 5_000;
  for (const step of ops) {
    const cells = model.get(step.key) ?? new Array<Cell | undefined>(N).fill(undefined);
    model.set(step.key, cells);
    if (step.op === 'add') {
      const meta = step.meta ? { owner: `${step.token}@${step.reading}`, fence: '7' } : null;
      g.add(step.reading, step.key, step.token, step.pttl, meta, true, readAt);
      cells[step.reading] = { token: step.token, expiry: step.pttl < 0 ? step.pttl : readAt + step.pttl, meta };
    } else {
      g.remove(step.reading, step.key);
      cells[step.reading] = undefined;
    }
  }
}

/** The views the model's cells give, one quorumView() each, in view order. */
function expected(
  model: Map<string, (Cell | undefined)[]>,
  ok: readonly boolean[],
  dropExpired: boolean,
  nodes: readonly number[] = [1, 2, 3],
): QuorumView[] {
  const views: QuorumView[] = [];
  for (const [key, cells] of model) {
    const shown = cells.map((c, i): LockCell => {
      const there = ok[i] && c !== undefined && !(dropExpired && c.expiry >= 0 && c.expiry <= NOW);
      return there
        ? {
            node: nodes[i]!,
            known: true,
            present: true,
            token: c.token,
            pttlMs: c.expiry < 0 ? c.expiry : Math.max(0, Math.round(c.expiry - NOW)),
            meta: c.meta,
          }
        : { node: nodes[i]!, known: ok[i]!, present: false, token: null, pttlMs: null, meta: null };
    });
    if (!shown.some((c) => c.present)) continue;
    views.push(quorumView(key.startsWith(PREFIX) ? key.slice(PREFIX.length) : key, key, shown, options));
  }
  return views.sort(compareLocks);
}

describe('LockGrouper.viewList', () => {
  it('property: every view, state, count and position is what classifying the same cells gives', () => {
    // Readings in any node order (cells are then sorted by node), some unreadable, keys past their TTL.
    const order = fc.constantFrom([1, 2, 3], [3, 1, 2], [2, 3, 1], [1, 3, 2]);
    fc.assert(
      fc.property(
        fc.array(opArb, { maxLength: 40, size: 'max' }),
        fc.array(fc.boolean(), { minLength: N, maxLength: N }),
        fc.boolean(),
        order,
        (ops, ok, dropExpired, nodes) => {
          const g = new LockGrouper(N, PREFIX);
          const model = new Map<string, (Cell | undefined)[]>();
          apply(g, model, ops);
          const reads = nodes.map((node, i) => ({ node, ok: ok[i]! }));
          const { list, stateCounts, shownPerReading } = g.viewList(reads, options, NOW, dropExpired);
          const want = expected(model, ok, dropExpired, nodes);
          expect(list.length).toBe(want.length);
          // Positions and states are answered without making a view; then the views themselves.
          want.forEach((view, i) => {
            expect([list.resourceAt(i), list.keyAt(i), list.stateAt(i)]).toEqual([view.resource, view.key, view.state]);
          });
          expect(list.toArray()).toEqual(want);
          if (want.length > 0) expect(list.at(0)).toBe(list.toArray()[0]); // made once
          const counts: Record<LockState, number> = { held: 0, expiring: 0, partial: 0, split: 0 };
          for (const view of want) counts[view.state]++;
          expect(stateCounts).toEqual(counts);
          // Per reading (not per node): reading i is node nodes[i].
          expect(shownPerReading).toEqual(nodes.map((node) => want.filter((v) => v.cells.find((c) => c.node === node)!.present).length));
        },
      ),
      { numRuns: 500 },
    );
  });

  it("property: a list does not follow the grouper's later changes", () => {
    fc.assert(
      fc.property(
        fc.array(opArb, { maxLength: 25, size: 'max' }),
        fc.array(opArb, { minLength: 1, maxLength: 25, size: 'max' }),
        (before, after) => {
          const g = new LockGrouper(N, PREFIX);
          const model = new Map<string, (Cell | undefined)[]>();
          apply(g, model, before);
          const { list } = g.viewList(readings, options, NOW, true);
          const want = expected(model, [true, true, true], true);
          apply(g, new Map(), after);
          expect(list.toArray()).toEqual(want);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('metadata found after a list was made (setMeta) stays out of that list, and goes into the next', () => {
    const g = new LockGrouper(N, PREFIX);
    for (let reading = 0; reading < N; reading++) g.add(reading, 'p:lock:a', 'tok', 9_000, null, false, NOW);
    const before = g.viewList(readings, options, NOW).list;
    const [wanted] = g.metaWanted([true, true, true]);
    g.setMeta(wanted!.group, wanted!.reading, { owner: 'found later' });
    expect(before.at(0).meta).toBeNull();
    expect(g.viewList(readings, options, NOW).list.at(0).meta).toEqual({ owner: 'found later' });
  });

  it('property: a page of the lazy list is the page of its views as an array, and makes only the views it shows', () => {
    const name = fc.string({ unit: fc.constantFrom('a', 'b', ':', 'é'), minLength: 1, maxLength: 3 });
    fc.assert(
      fc.property(
        fc.uniqueArray(name, { maxLength: 25 }),
        fc.string({ unit: fc.constantFrom('a', 'b', ':'), maxLength: 2 }),
        fc.integer({ min: 1, max: 5 }),
        fc.option(fc.constantFrom<LockState[]>(['held'], ['partial', 'split'], ['expiring']), { nil: undefined }),
        fc.option(fc.constantFrom('a', 't2', 'b@1'), { nil: undefined }),
        (resources, prefix, limit, state, search) => {
          const g = new LockGrouper(N, PREFIX);
          resources.forEach((r, i) => {
            for (let reading = 0; reading <= i % N; reading++)
              g.add(reading, PREFIX + r, i % 4 === 0 ? `t${reading}` : 't2', 1_000 + i * 1_000, { owner: `${r}@${reading}` }, true, NOW);
          });
          const { list } = g.viewList(readings, options, NOW);
          const made: number[] = [];
          const counting = {
            ...list,
            length: list.length,
            resourceAt: (i: number) => list.resourceAt(i),
            keyAt: (i: number) => list.keyAt(i),
            stateAt: (i: number) => list.stateAt(i),
            at: (i: number) => (made.push(i), list.at(i)),
            toArray: () => list.toArray(),
          };
          const query = { prefix, limit, state, search };
          const lazy = pageLocks({ lockList: counting }, query);
          expect(lazy).toEqual(pageLocks({ locks: list.toArray() }, query));
          if (search === undefined) expect(new Set(made).size).toBe(lazy.items.length);
          const second = lazy.nextCursor ? pageLocks({ lockList: list }, { ...query, cursor: lazy.nextCursor }) : null;
          if (second) expect(second).toEqual(pageLocks({ locks: list.toArray() }, { ...query, cursor: lazy.nextCursor }));
        },
      ),
      { numRuns: 500 },
    );
  });
});
