import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockDetail, pageLocks, scanNode, snapshot, SCAN_BATCH_SHA, startSnapshot, type QuorumView, type Snapshot } from '@/lib/inspect';
import { startTestCluster, uniquePrefix, type TestCluster } from '../support/cluster';
import { putLock } from '../support/locks';

let cluster: TestCluster;
let clients: Redis[];

beforeAll(async () => {
  cluster = await startTestCluster({ nodes: 5, persistence: 'none' });
  clients = [1, 2, 3, 4, 5].map((id) => cluster.client(id));
});
afterAll(async () => {
  await cluster?.stop();
});

/** Connect the clients the test writes through (the inspector itself copes with lazy ones). */
async function connected(): Promise<Redis[]> {
  await Promise.all(clients.map((c) => (c.status === 'wait' ? c.connect() : undefined)));
  return clients;
}

/**
 * SET the lock key on the given nodes, the way the lock core does: `<prefix>lock:<resource>` =
 * `<token> <JSON of string values>`, or the bare token without metadata.
 */
async function put(prefix: string, resource: string, token: string, nodes: number[], pxMs = 30_000, meta?: Record<string, string>) {
  await connected();
  await putLock(clients, prefix, resource, token, nodes, { pxMs, meta });
}

const byResource = (snap: Snapshot) => new Map<string, QuorumView>(snap.locks.map((l) => [l.resource, l]));

describe('snapshot on real nodes', () => {
  it('classifies held, partial, split and expiring, with validity and metadata', async () => {
    const p = uniquePrefix('states');
    // Never-connected lazy clients: the inspector connects them itself.
    expect((await snapshot(clients, { keyPrefix: p })).nodes.every((n) => n.ok)).toBe(true);
    await put(p, 'held-5', 'tok-held5-aaaaaaaaaaaaaaaa', [1, 2, 3, 4, 5], 30_000, { owner: 'svc-a', fence: '12', purpose: 'demo' });
    await put(p, 'held-3', 'tok-held3-aaaaaaaaaaaaaaaa', [2, 4, 5], 30_000, { owner: 'svc-b', fence: '13' });
    await put(p, 'partial', 'tok-partial-aaaaaaaaaaaaaa', [1, 2]);
    await put(p, 'split', 'tok-split-A', [1, 2]);
    await put(p, 'split', 'tok-split-B', [3, 4]);
    await put(p, 'expiring', 'tok-expiring-aaaaaaaaaaaa', [1, 2, 3, 4, 5], 1_900);

    const snap = await snapshot(clients, { keyPrefix: p });
    expect(snap.nodes.map((n) => [n.node, n.ok, n.error])).toEqual([1, 2, 3, 4, 5].map((n) => [n, true, null]));
    expect(snap.nodes.map((n) => n.keys)).toEqual([4, 5, 3, 4, 3]);
    expect(snap.locks.map((l) => l.resource)).toEqual(['expiring', 'held-3', 'held-5', 'partial', 'split']);
    expect(snap.stateCounts).toEqual({ held: 2, expiring: 1, partial: 1, split: 1 });
    expect(snap.quorum).toBe(3);

    const locks = byResource(snap);
    const held5 = locks.get('held-5')!;
    expect(held5).toMatchObject({
      state: 'held',
      holders: 5,
      tokens: 1,
      majorityToken: 'tok-held5-aaaaaaaaaaaaaaaa',
      fence: 12,
      meta: { owner: 'svc-a', fence: '12', purpose: 'demo' },
      key: `${p}lock:held-5`,
    });
    expect(held5.validityMs).toBeGreaterThan(25_000);
    expect(held5.validityMs).toBeLessThanOrEqual(30_000 - 302);
    // Metadata is read on one node per key; where that node lacks the key it is fetched afterwards.
    expect(locks.get('held-3')).toMatchObject({ state: 'held', holders: 3, meta: { owner: 'svc-b' }, fence: 13 });
    expect(locks.get('held-3')!.cells.map((c) => c.present)).toEqual([false, true, false, true, true]);
    expect(locks.get('partial')).toMatchObject({ state: 'partial', holders: 2, tokens: 1, validityMs: null, majorityToken: null });
    expect(locks.get('split')).toMatchObject({ state: 'split', holders: 2, tokens: 2, majorityToken: null });
    expect(locks.get('split')!.cells[4]).toMatchObject({ node: 5, known: true, present: false });
    const expiring = locks.get('expiring')!;
    expect(expiring.state).toBe('expiring');
    expect(expiring.validityMs).toBeLessThanOrEqual(1_900);

    const detail = await lockDetail(clients, 'held-3', { keyPrefix: p });
    expect(detail.view).toMatchObject({ state: 'held', holders: 3, fence: 13 });
    expect(detail.view!.cells.filter((c) => c.meta).map((c) => c.node)).toEqual([2, 4, 5]);
    expect(detail.view!.cells[1]!.meta).toEqual({ owner: 'svc-b', fence: '13' });
    expect(detail.nodes.map((n) => n.type)).toEqual(['none', 'string', 'none', 'string', 'string']);
    expect((await lockDetail(clients, 'nothing-here', { keyPrefix: p })).view).toBeNull();
  });

  it("reads every key's metadata across many batches, each key once", async () => {
    const p = uniquePrefix('batches');
    await connected();
    const pipelines = clients.map((c) => c.pipeline());
    for (let i = 0; i < 1_500; i++) {
      const holders = i % 2 ? [0, 1, 2] : [2, 3, 4];
      for (const n of holders) {
        pipelines[n]!.set(`${p}lock:r${i}`, `tok-${i} ${JSON.stringify({ owner: `o${i}` })}`, 'PX', 60_000);
      }
    }
    await Promise.all(pipelines.map((pl) => pl.exec()));
    const snap = await snapshot(clients, { keyPrefix: p, count: 200 });
    expect(snap.locks).toHaveLength(1_500);
    expect(snap.nodes.every((n) => n.batches > 1)).toBe(true);
    expect(snap.nodes.map((n) => n.keys)).toEqual([750, 750, 1_500, 750, 750]);
    expect(snap.locks.every((l) => l.state === 'held' && l.meta?.owner === `o${l.resource.slice(1)}`)).toBe(true);
    expect(snap.locks.every((l) => l.majorityToken === `tok-${l.resource.slice(1)}`)).toBe(true);
    // Without metadata the values are still split: the token alone, never the JSON behind it.
    const plain = await snapshot(clients, { keyPrefix: p, withMeta: false });
    expect(plain.locks.every((l) => l.meta === null && l.majorityToken === `tok-${l.resource.slice(1)}`)).toBe(true);
  });

  it("scans another library's layout by pattern: the bare resource name holds the token", async () => {
    const p = uniquePrefix('foreign');
    await connected();
    await Promise.all(clients.slice(0, 3).map((c) => c.set(`${p}orders:42`, 'node-redlock-token', 'PX', 20_000)));
    await clients[3]!.set(`${p}orders:43`, 'lonely', 'PX', 20_000);
    const snap = await snapshot(clients, { keyPrefix: 'rl:', pattern: `${p}orders:*` });
    expect(snap.locks.map((l) => [l.resource, l.key, l.state, l.meta])).toEqual([
      [`${p}orders:42`, `${p}orders:42`, 'held', null],
      [`${p}orders:43`, `${p}orders:43`, 'partial', null],
    ]);
    const detail = await lockDetail(clients, 'ignored', { keyPrefix: 'rl:', key: `${p}orders:42` });
    expect(detail.view).toMatchObject({ state: 'held', holders: 3, resource: `${p}orders:42` });
  });

  it('reports non-string keys with their type, survives binary and huge values, and reloads a flushed script', async () => {
    const p = uniquePrefix('odd');
    await connected();
    await clients[0]!.hset(`${p}lock:a-hash`, 'f', 'v');
    await clients[0]!.rpush(`${p}lock:a-list`, 'x');
    await clients[0]!.set(`${p}lock:binary`, Buffer.from([0xff, 0xfe, 0x00, 0x80, 0x41]), 'PX', 20_000);
    await clients[0]!.set(`${p}lock:huge`, 'x'.repeat(100_000), 'PX', 20_000);
    await clients[0]!.set(`${p}lock:forever`, 'no-ttl');
    await clients[0]!.script('FLUSH');
    const scan = await scanNode(clients[0]!, 1, { keyPrefix: p });
    expect(scan.ok).toBe(true);
    expect(scan.nonStringCount).toBe(2);
    expect(scan.nonString.map((k) => [k.key, k.type]).sort()).toEqual([
      [`${p}lock:a-hash`, 'hash'],
      [`${p}lock:a-list`, 'list'],
    ]);
    const found = new Map(scan.keys.map((k) => [k.resource, k]));
    expect([...found.keys()].sort()).toEqual(['binary', 'forever', 'huge']);
    expect(found.get('binary')!.token).toContain('A');
    expect(found.get('huge')!.token).toHaveLength(1_024);
    expect(found.get('forever')!.pttlMs).toBe(-1);
    expect(await clients[0]!.script('EXISTS', SCAN_BATCH_SHA)).toEqual([1]); // EVAL fallback cached it again

    const snap = await snapshot(clients, { keyPrefix: p });
    expect(snap.locks.find((l) => l.resource === 'forever')!.noTtlNodes).toEqual([1]);
    const detail = await lockDetail(clients, 'a-hash', { keyPrefix: p });
    expect(detail.view).toBeNull();
    expect(detail.nodes[0]).toMatchObject({ ok: true, type: 'hash' });
  });

  it('stops at maxKeys and reports the scan as truncated', async () => {
    const p = uniquePrefix('cap');
    await connected();
    const pl = clients[1]!.pipeline();
    for (let i = 0; i < 300; i++) pl.set(`${p}lock:k${i}`, 't', 'PX', 20_000);
    await pl.exec();
    const scan = await scanNode(clients[1]!, 2, { keyPrefix: p, count: 50, maxKeys: 100 });
    expect(scan.truncated).toBe(true);
    expect(scan.keys.length).toBeGreaterThanOrEqual(100);
    expect(scan.keys.length).toBeLessThan(300);
  });

  it('pages with a stable cursor across inserts and deletes, filtered by prefix and state', async () => {
    const p = uniquePrefix('pages');
    const names = ['a:0', 'a:1', 'a:2', 'a:3', 'a:4', 'a:5', 'a:6', 'a:7', 'b:0', 'b:1'];
    for (const r of names) await put(p, r, `tok-${r}`, r === 'a:6' ? [1, 2] : [1, 2, 3]);
    const first = pageLocks(await snapshot(clients, { keyPrefix: p }), { prefix: 'a:', limit: 4 });
    expect(first.items.map((l) => l.resource)).toEqual(['a:0', 'a:1', 'a:2', 'a:3']);
    expect(first.matched).toBe(8);

    await put(p, 'a:1b', 'tok-new', [1, 2, 3]); // before the cursor: belongs to pages already seen
    await put(p, 'a:4b', 'tok-new', [1, 2, 3]); // after it
    await Promise.all(clients.map((c) => c.del(`${p}lock:a:5`)));
    const snap = await snapshot(clients, { keyPrefix: p });
    const second = pageLocks(snap, { prefix: 'a:', limit: 4, cursor: first.nextCursor });
    expect(second.items.map((l) => l.resource)).toEqual(['a:4', 'a:4b', 'a:6', 'a:7']);
    expect(second.nextCursor).toBeNull();

    expect(pageLocks(snap, { state: 'partial' }).items.map((l) => l.resource)).toEqual(['a:6']);
    expect(pageLocks(snap, { prefix: 'b:', state: 'held' }).items.map((l) => l.resource)).toEqual(['b:0', 'b:1']);
    expect(pageLocks(snap, { prefix: 'b:', state: 'split' }).items).toEqual([]);
  });

  it('a run says it is scanning until every node has been scanned, and its lock list makes views only on demand', async () => {
    const p = uniquePrefix('snap-run');
    await putLock(clients, p, ['x', 'y'], 'tok', [1, 2, 3]);
    const run = startSnapshot(clients, { keyPrefix: p });
    expect(run.scanning()).toBe(true);
    const snap = await run.done;
    expect(run.scanning()).toBe(false);
    expect([snap.lockList.length, snap.lockList.resourceAt(1), snap.lockList.stateAt(0)]).toEqual([2, 'y', 'held']);
    expect(snap.lockList.at(0)).toBe(snap.locks[0]);
  });

  it('aborts when asked', async () => {
    const controller = new AbortController();
    controller.abort(new Error('client went away'));
    await expect(snapshot(clients, { keyPrefix: 'rl:', signal: controller.signal })).rejects.toThrow('client went away');
  });

  it('a partitioned minority gives per-node errors and unknown cells, not a failed snapshot', async () => {
    const p = uniquePrefix('partition');
    await put(p, 'leftover', 'tok-leftover', [1, 2]);
    for (const id of [3, 4, 5]) await cluster.supervisor.partition(id);
    try {
      const started = performance.now();
      const snap = await snapshot(clients, { keyPrefix: p, batchTimeoutMs: 300 });
      expect(performance.now() - started).toBeLessThan(2_000);
      expect(snap.nodes.map((n) => n.ok)).toEqual([true, true, false, false, false]);
      expect(snap.nodes[2]!.error).toMatch(/timed out/);
      expect(snap.locks).toHaveLength(1);
      expect(snap.locks[0]).toMatchObject({ state: 'partial', holders: 2, unknownNodes: [3, 4, 5] });
      expect(snap.locks[0]!.cells.map((c) => c.known)).toEqual([true, true, false, false, false]);
      const detail = await lockDetail(clients, 'leftover', { keyPrefix: p, timeoutMs: 300 });
      expect(detail.nodes.map((n) => n.ok)).toEqual([true, true, false, false, false]);
      expect(detail.view).toMatchObject({ state: 'partial', unknownNodes: [3, 4, 5] });
    } finally {
      for (const id of [3, 4, 5]) await cluster.supervisor.heal(id);
    }
  });

  it('a crashed node gives an error for that node while the others are still reported', async () => {
    const p = uniquePrefix('crash');
    await put(p, 'r', 'tok-r', [1, 2, 3, 4, 5]);
    await cluster.supervisor.crash(5);
    try {
      const snap = await snapshot(clients, { keyPrefix: p, batchTimeoutMs: 500 });
      expect(snap.nodes.slice(0, 4).every((n) => n.ok)).toBe(true);
      expect(snap.nodes[4]).toMatchObject({ node: 5, ok: false, keys: 0 });
      expect(snap.nodes[4]!.error).toBeTruthy();
      expect(snap.locks[0]).toMatchObject({ resource: 'r', state: 'held', holders: 4, unknownNodes: [5] });
    } finally {
      await cluster.supervisor.restart(5);
    }
  });
});
