import { describe, expect, it } from 'vitest';
import { earlyPage, readLocks, startSnapshot, type SnapshotRun } from '@/lib/inspect';
import { uniquePrefix, waitFor } from '../support/cluster';
import { fiveNodeClients, putLock } from '../support/locks';

/**
 * An early page: the first locks a scan still under way has found, each read directly on every
 * node. A paused node keeps the scan from ending (its batch waits for the timeout), which makes
 * "still scanning" a state the test controls.
 */

const env = fiveNodeClients();

function put(p: string, resource: string, token: string, nodes: number[], meta?: Record<string, string>) {
  return putLock(env.clients, p, resource, token, nodes, { meta });
}

describe('readLocks on real nodes', () => {
  it('reads the given keys on every node and classifies them, metadata by token', async () => {
    const p = uniquePrefix('read');
    await put(p, 'a', 'tok-a', [1, 2, 3, 4, 5], { owner: 'A' });
    await put(p, 'b', 'tok-b', [2, 3]);
    await env.clients[0]!.hset(`${p}lock:c`, 'f', 'v'); // not a lock
    const { views, nodes } = await readLocks(
      env.clients,
      ['c', 'b', 'a', 'gone'].map((r) => ({ resource: r, key: `${p}lock:${r}` })),
      { keyPrefix: p },
    );
    expect(nodes.every((n) => n.ok)).toBe(true);
    expect(views.map((v) => [v.resource, v.state, v.holders, v.meta?.owner ?? null])).toEqual([
      ['a', 'held', 5, 'A'],
      ['b', 'partial', 2, null],
    ]);
    expect(views[0]!.cells.every((c) => c.meta?.owner === 'A' && c.pttlMs! > 25_000)).toBe(true);
    expect((await readLocks(env.clients, [], { keyPrefix: p })).views).toEqual([]);
  });
});

describe('early page of a scan still under way', () => {
  it('shows the first locks found, each exact on every node, with the paused node unknown', async () => {
    const p = uniquePrefix('early');
    for (let i = 0; i < 30; i++) await put(p, `r${String(i).padStart(2, '0')}`, `tok-${i}`, [1, 2, 3, 4, 5], { owner: `o${i}` });
    await put(p, 'x-only-on-4', 'tok-x', [4]);
    await env.cluster!.supervisor.pause(5);
    let run: SnapshotRun | null = null;
    try {
      run = startSnapshot(env.clients, { keyPrefix: p, batchTimeoutMs: 4_000 });
      const started = run;
      await waitFor(() => started.found() >= 31, 3_000, 'the scan of nodes 1-4');
      expect(run.finished()).toBeNull();
      // After the scan saw them: r00 changes hands on node 1, r01 is released everywhere.
      await env.clients[0]!.set(`${p}lock:r00`, 'tok-new', 'PX', 30_000);
      await Promise.all(env.clients.slice(0, 4).map((c) => c.del(`${p}lock:r01`)));

      const t0 = performance.now();
      const page = await earlyPage(env.clients, run, { limit: 5 }, { keyPrefix: p, timeoutMs: 200 });
      expect(performance.now() - t0).toBeLessThan(1_500);
      expect(run.finished()).toBeNull();
      expect(page.nextCursor).toBeNull();
      expect(page.items.map((v) => v.resource)).toEqual(['r00', 'r02', 'r03', 'r04']);
      expect(page.items[0]!.cells.map((c) => c.token)).toEqual(['tok-new', 'tok-0', 'tok-0', 'tok-0', null]);
      expect(page.items[1]).toMatchObject({ state: 'held', holders: 4, unknownNodes: [5], meta: { owner: 'o2' } });
      expect(page.items[1]!.cells[4]).toMatchObject({ node: 5, known: false });
      expect(page.nodes.map((n) => [n.node, n.ok, n.keys])).toEqual([
        [1, true, 30],
        [2, true, 30],
        [3, true, 30],
        [4, true, 31],
        [5, false, 0],
      ]);
      expect(page.found).toBe(31);
      expect(page.scannedKeys).toBe(121);
      expect(page.matched).toBe(31);

      // Filters: a prefix, a search on names, a state (applied to the exact views).
      expect(
        (await earlyPage(env.clients, run, { prefix: 'x-', limit: 5 }, { keyPrefix: p, timeoutMs: 200 })).items.map((v) => [
          v.resource,
          v.state,
        ]),
      ).toEqual([['x-only-on-4', 'partial']]);
      expect(
        (await earlyPage(env.clients, run, { search: 'R2', limit: 3 }, { keyPrefix: p, timeoutMs: 200 })).items.map((v) => v.resource),
      ).toEqual(['r20', 'r21', 'r22']);
      const partial = await earlyPage(env.clients, run, { state: 'partial', limit: 100 }, { keyPrefix: p, timeoutMs: 200 });
      expect(partial.items.map((v) => v.resource)).toEqual(['x-only-on-4']);
      expect(partial.matched).toBe(1);
    } finally {
      await env.cluster!.supervisor.resume(5);
    }
    const snap = await run!.done;
    expect(snap.nodes.map((n) => n.ok)).toEqual([true, true, true, true, true]);
    expect(run!.finished()).toBe(snap);
  });
});
