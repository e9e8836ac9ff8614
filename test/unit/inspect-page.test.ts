import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareLocks, decodeCursor, encodeCursor, InvalidCursorError, pageLocks, type LockState, type QuorumView } from '@/lib/inspect';

function lock(resource: string, state: LockState = 'held', owner = 'svc'): QuorumView {
  return {
    resource,
    key: `rl:lock:${resource}`,
    cells: [],
    state,
    majorityToken: state === 'held' ? `tok-${resource}` : null,
    holders: 3,
    tokens: 1,
    quorum: 3,
    validityMs: null,
    fence: null,
    meta: { owner },
    noTtlNodes: [],
    overCeilingNodes: [],
    unknownNodes: [],
  };
}
const snapshotOf = (locks: QuorumView[]) => ({ locks: [...locks].sort(compareLocks) });

/** Every page from the start, following nextCursor. */
function walk(locks: QuorumView[], limit: number, query: Parameters<typeof pageLocks>[1] = {}): string[] {
  const seen: string[] = [];
  let cursor: string | null = null;
  for (let guard = 0; guard < 10_000; guard++) {
    const page = pageLocks(snapshotOf(locks), { ...query, cursor, limit });
    seen.push(...page.items.map((l) => l.resource));
    if (!page.nextCursor) return seen;
    expect(page.items).toHaveLength(limit);
    cursor = page.nextCursor;
  }
  throw new Error('pagination did not end');
}

describe('pageLocks', () => {
  const locks = ['orders:1', 'orders:2', 'orders:10', 'users:1', 'users:2', 'jobs:a', 'jobs:b'].map((r, i) =>
    lock(r, i % 3 === 0 ? 'split' : 'held', i % 2 ? 'alice' : 'bob'),
  );

  it('pages in resource order and ends with a null cursor', () => {
    expect(walk(locks, 3)).toEqual(['jobs:a', 'jobs:b', 'orders:1', 'orders:10', 'orders:2', 'users:1', 'users:2']);
    const first = pageLocks(snapshotOf(locks), { limit: 3 });
    expect(first.matched).toBe(7);
    expect(first.nextCursor).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('filters by resource prefix, state and search text (owner, resource, token)', () => {
    expect(walk(locks, 2, { prefix: 'orders:' })).toEqual(['orders:1', 'orders:10', 'orders:2']);
    expect(walk(locks, 2, { state: 'split' })).toEqual(['jobs:b', 'orders:1', 'users:1']);
    expect(walk(locks, 10, { state: ['split', 'held'], prefix: 'users:' })).toEqual(['users:1', 'users:2']);
    expect(walk(locks, 10, { search: 'ALICE' })).toEqual(['jobs:a', 'orders:2', 'users:1']);
    expect(walk(locks, 10, { search: 'tok-orders:' })).toEqual(['orders:10', 'orders:2']); // orders:1 is split: no majority token
    expect(pageLocks(snapshotOf(locks), { prefix: 'nothing' })).toEqual({ items: [], nextCursor: null, matched: 0 });
  });

  it('a cursor survives inserts and deletes: nothing that stays is repeated or skipped', () => {
    const before = ['a', 'c', 'e', 'g', 'i', 'k'].map((r) => lock(r));
    const first = pageLocks(snapshotOf(before), { limit: 3 });
    expect(first.items.map((l) => l.resource)).toEqual(['a', 'c', 'e']);
    // Between the pages: 'b' (before the cursor) and 'h' appear, 'g' goes away.
    const after = [...before.filter((l) => l.resource !== 'g'), lock('b'), lock('h')];
    const second = pageLocks(snapshotOf(after), { limit: 3, cursor: first.nextCursor });
    expect(second.items.map((l) => l.resource)).toEqual(['h', 'i', 'k']);
    expect(second.nextCursor).toBeNull();
  });

  it('property: any edits between pages never duplicate or skip a lock present throughout', () => {
    const name = fc.string({ minLength: 1, maxLength: 4 });
    const initialArb = fc.uniqueArray(fc.record({ resource: name, deleted: fc.boolean() }), { selector: (e) => e.resource, maxLength: 40 });
    fc.assert(
      fc.property(
        initialArb,
        fc.uniqueArray(name, { maxLength: 20 }),
        fc.integer({ min: 1, max: 7 }),
        fc.nat(10),
        (initial, inserts, limit, editAfter) => {
          let current = initial.map((e) => lock(e.resource));
          const seen: string[] = [];
          let cursor: string | null = null;
          for (let pageNo = 0; ; pageNo++) {
            const page = pageLocks(snapshotOf(current), { cursor, limit });
            seen.push(...page.items.map((l) => l.resource));
            if (pageNo === editAfter) {
              const deleted = new Set(initial.filter((e) => e.deleted).map((e) => e.resource));
              const known = new Set(initial.map((e) => e.resource));
              current = [...current.filter((l) => !deleted.has(l.resource)), ...inserts.filter((r) => !known.has(r)).map((r) => lock(r))];
            }
            if (!page.nextCursor) break;
            cursor = page.nextCursor;
          }
          expect(new Set(seen).size).toBe(seen.length);
          for (const e of initial) if (!e.deleted) expect(seen).toContain(e.resource);
          expect([...seen].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).toEqual(seen);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('property: prefix-only pages (found by binary search) are exactly the reference walk over every lock', () => {
    const name = fc.string({ unit: fc.constantFrom('a', 'b', 'c', ':', 'é', '\uffff'), minLength: 1, maxLength: 4 });
    fc.assert(
      fc.property(
        fc.uniqueArray(name, { maxLength: 30 }),
        fc.string({ unit: fc.constantFrom('a', 'b', ':', 'é', '\uffff'), maxLength: 3 }),
        fc.option(name, { nil: null }),
        fc.integer({ min: 1, max: 6 }),
        (resources, prefix, cursorAt, limit) => {
          const snap = snapshotOf(resources.map((r) => lock(r)));
          const cursor = cursorAt === null ? null : encodeCursor({ resource: cursorAt, key: `rl:lock:${cursorAt}` });
          const page = pageLocks(snap, { prefix, cursor, limit });
          // The reference: every lock in order, filtered one by one.
          const inRun = snap.locks.filter((l) => l.resource.startsWith(prefix));
          const after =
            cursorAt === null ? inRun : inRun.filter((l) => compareLocks(l, { resource: cursorAt, key: `rl:lock:${cursorAt}` }) > 0);
          expect(page.items.map((l) => l.resource)).toEqual(after.slice(0, limit).map((l) => l.resource));
          expect(page.matched).toBe(inRun.length);
          expect(page.nextCursor === null).toBe(after.length <= limit);
          // The same query with a filter that takes everything goes the long way: same answer.
          expect(pageLocks(snap, { prefix, cursor, limit, state: ['held', 'expiring', 'partial', 'split'] })).toEqual(page);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('clamps the limit and rejects cursors it did not make', () => {
    expect(pageLocks(snapshotOf(locks), { limit: 0 }).items).toHaveLength(1);
    expect(pageLocks(snapshotOf(locks), { limit: Number.NaN }).items).toHaveLength(7);
    expect(() => pageLocks(snapshotOf(locks), { cursor: 'not a cursor!' })).toThrow(InvalidCursorError);
    expect(() => pageLocks(snapshotOf(locks), { cursor: Buffer.from('{"x":1}').toString('base64url') })).toThrow(/cursor/);
    const c = encodeCursor({ resource: 'r/ü', key: 'rl:lock:r/ü' });
    expect(decodeCursor(c)).toEqual({ resource: 'r/ü', key: 'rl:lock:r/ü' });
  });
});
