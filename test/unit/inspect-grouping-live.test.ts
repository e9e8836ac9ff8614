import { describe, expect, it } from 'vitest';
import { LockGrouper } from '@/lib/inspect/grouping';

const readings = [1, 2, 3].map((node) => ({ node, ok: true }));
const options = { configuredNodes: 3 };
const resources = (g: LockGrouper, now = 0, dropExpired = false) => g.views(readings, options, now, dropExpired).map((v) => v.resource);

/** The grouper as the live index uses it: kept between views, cells removed, groups added later. */
describe('LockGrouper kept alive', () => {
  it('keeps view order across views as groups are added between them (sorted, then merged)', () => {
    const g = new LockGrouper(3, 'p:lock:');
    for (const r of ['m', 'c', 'x']) g.add(0, `p:lock:${r}`, 't', 10_000, null, true);
    expect(resources(g)).toEqual(['c', 'm', 'x']);
    for (const r of ['a', 'n', 'z', 'd']) g.add(1, `p:lock:${r}`, 't', 10_000, null, true);
    expect(resources(g)).toEqual(['a', 'c', 'd', 'm', 'n', 'x', 'z']);
    g.add(2, 'p:lock:b', 't', 10_000, null, true);
    expect(resources(g)).toEqual(['a', 'b', 'c', 'd', 'm', 'n', 'x', 'z']);
  });

  it('removes cells, counts what is present, and leaves out keys held nowhere', () => {
    const g = new LockGrouper(3, 'p:lock:');
    g.add(0, 'p:lock:a', 'ta', 10_000, { owner: 'o' }, true);
    g.add(1, 'p:lock:a', 'ta', 10_000, null, true);
    g.add(0, 'p:lock:b', 'tb', 10_000, null, true);
    g.remove(0, 'p:lock:a');
    g.remove(0, 'p:lock:a'); // twice is once
    g.remove(2, 'p:lock:none');
    expect(g.counts).toEqual([1, 1, 0]);
    const [a] = g.views(readings, options);
    expect(a!.cells.map((c) => c.present)).toEqual([false, true, false]);
    expect(a!.meta).toBeNull(); // the metadata went with the cell
    g.remove(0, 'p:lock:b');
    expect(g.emptyGroups).toBe(1);
    expect(resources(g)).toEqual(['a']);
    expect(g.firstKeys(10, () => true).keys.map((k) => k.resource)).toEqual(['a']);
    g.add(2, 'p:lock:b', 'tb2', 10_000, null, true); // held again
    expect(g.emptyGroups).toBe(0);
    expect(resources(g)).toEqual(['a', 'b']);
  });

  it('clearReading empties one node; compacted() drops the empty groups and keeps the rest as it was', () => {
    const g = new LockGrouper(3, 'p:lock:');
    for (let i = 0; i < 6; i++) g.add(0, `p:lock:k${i}`, `t${i}`, 10_000 + i, { owner: `o${i}` }, true, 100);
    g.add(1, 'p:lock:k4', 't4', 5_000, null, true, 100);
    g.clearReading(0);
    expect(g.counts).toEqual([0, 1, 0]);
    expect(g.emptyGroups).toBe(5);
    const before = g.views(readings, options, 200);
    const c = g.compacted();
    expect(c.size).toBe(1);
    expect(c.emptyGroups).toBe(0);
    expect(c.counts).toEqual([0, 1, 0]);
    expect(c.views(readings, options, 200)).toEqual(before);
    c.add(0, 'p:lock:a', 'ta', 1_000, null, true);
    expect(resources(c)).toEqual(['a', 'k4']);
  });

  it('dropExpired: a key whose TTL ran out by `now` is absent (a key without TTL never is)', () => {
    const g = new LockGrouper(3, 'p:lock:');
    g.add(0, 'p:lock:short', 't', 100, null, true, 1_000);
    g.add(1, 'p:lock:short', 't', 5_000, null, true, 1_000);
    g.add(0, 'p:lock:forever', 'f', -1, null, true, 1_000);
    expect(resources(g, 1_050, true)).toEqual(['forever', 'short']);
    const views = g.views(readings, options, 1_200, true);
    expect(views.map((v) => v.resource)).toEqual(['forever', 'short']);
    expect(views[1]!.cells.map((c) => c.present)).toEqual([false, true, false]);
    // A scan's grouper keeps it, at PTTL 0.
    expect(g.views(readings, options, 1_200)[1]!.cells[0]).toMatchObject({ present: true, pttlMs: 0 });
    expect(resources(g, 7_000, true)).toEqual(['forever']);
  });
});
