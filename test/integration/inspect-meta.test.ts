import { describe, expect, it } from 'vitest';
import { lockDetail, scanNode, snapshot, type QuorumView } from '@/lib/inspect';
import { uniquePrefix } from '../support/cluster';
import { fiveNodeClients, putLock } from '../support/locks';

/**
 * Holder metadata in the token-keyed layout: `<prefix>meta:<token>` is a JSON string, read only
 * through a lock key's value on the same node. Orphans, leftover hashes and bad JSON are "none".
 */

const env = fiveNodeClients();

const ALL = [1, 2, 3, 4, 5];

/** Lock keys of `resources` = token on `nodes`, and the token's meta string there when given. */
function put(p: string, resources: string[], token: string, nodes: number[], meta?: Record<string, string> | string) {
  return putLock(env.clients, p, resources, token, nodes, { meta });
}

const byResource = (locks: QuorumView[]) => new Map(locks.map((l) => [l.resource, l]));

describe('token-keyed holder metadata on real nodes', () => {
  it('shares one meta key between the resources of a multi-resource lock', async () => {
    const p = uniquePrefix('multi');
    await put(p, ['a', 'b', 'c'], 'tok-multi-aaaaaaaaaaaaaaaaa', ALL, { owner: 'h:1', fence: '7', purpose: 'batch' });
    const locks = byResource((await snapshot(env.clients, { keyPrefix: p })).locks);
    for (const r of ['a', 'b', 'c']) expect(locks.get(r)).toMatchObject({ state: 'held', meta: { owner: 'h:1', purpose: 'batch' }, fence: 7 });
    const detail = await lockDetail(env.clients, 'b', { keyPrefix: p });
    expect(detail.view!.cells.map((c) => c.meta?.owner)).toEqual(['h:1', 'h:1', 'h:1', 'h:1', 'h:1']);
  });

  it('never attributes an orphan meta key to a lock key holding another token', async () => {
    const p = uniquePrefix('orphan');
    // Attempt A won nodes 1-3; on nodes 4-5 its SET NX lost to B, but A's meta key landed there too.
    await put(p, ['r'], 'tok-A-aaaaaaaaaaaaaaaaaaaaa', [1, 2, 3], { owner: 'A' });
    await put(p, ['r'], 'tok-B-bbbbbbbbbbbbbbbbbbbbb', [4, 5]);
    await Promise.all([3, 4].map((i) => env.clients[i]!.set(`${p}meta:tok-A-aaaaaaaaaaaaaaaaaaaaa`, JSON.stringify({ owner: 'A' }), 'PX', 30_000)));
    // And a lock with no metadata at all, next to an orphan of some other attempt.
    await put(p, ['bare'], 'tok-bare-ccccccccccccccccccc', ALL);
    await env.clients[0]!.set(`${p}meta:tok-other-dddddddddddddddd`, JSON.stringify({ owner: 'other' }), 'PX', 30_000);

    // Every node reads every key's metadata; then the default (one share node per key, the
    // majority token's metadata fetched afterwards when that node held another token).
    for (const metaShare of [{ index: 0, of: 1 }, undefined]) {
      const locks = byResource((await snapshot(env.clients, { keyPrefix: p, metaShare })).locks);
      expect(locks.get('r')).toMatchObject({ state: 'held', holders: 3, meta: { owner: 'A' } });
      expect(locks.get('r')!.cells.slice(3).map((c) => c.meta)).toEqual([null, null]);
      expect(locks.get('bare')!.meta).toBeNull();
    }
    expect((await snapshot(env.clients, { keyPrefix: p, metaShare: { index: 0, of: 1 } })).locks.find((l) => l.resource === 'r')!.cells.map((c) => c.meta?.owner ?? null))
      .toEqual(['A', 'A', 'A', null, null]);
    const detail = await lockDetail(env.clients, 'r', { keyPrefix: p });
    expect(detail.view!.cells.map((c) => c.meta?.owner ?? null)).toEqual(['A', 'A', 'A', null, null]);
    const scan = await scanNode(env.clients[3]!, 4, { keyPrefix: p });
    expect(scan.keys.find((k) => k.resource === 'r')).toMatchObject({ token: 'tok-B-bbbbbbbbbbbbbbbbbbbbb', meta: null, metaRead: true });
  });

  it('reads a split lock\'s metadata per token, and the majority holder\'s for the view', async () => {
    const p = uniquePrefix('split');
    await put(p, ['s'], 'tok-S1-aaaaaaaaaaaaaaaaaaaa', [1, 2], { owner: 'one' });
    await put(p, ['s'], 'tok-S2-bbbbbbbbbbbbbbbbbbbb', [3, 4], { owner: 'two' });
    const detail = await lockDetail(env.clients, 's', { keyPrefix: p });
    expect(detail.view).toMatchObject({ state: 'split', tokens: 2 });
    expect(detail.view!.cells.map((c) => c.meta?.owner ?? null)).toEqual(['one', 'one', 'two', 'two', null]);
    const snap = await snapshot(env.clients, { keyPrefix: p, metaShare: { index: 0, of: 1 } });
    expect(snap.locks[0]!.cells.map((c) => c.meta?.owner ?? null)).toEqual(['one', 'one', 'two', 'two', null]);
  });

  it('treats a leftover hash, bad JSON and non-string fields as no metadata, without failing', async () => {
    const p = uniquePrefix('odd-meta');
    await put(p, ['hash'], 'tok-hash-aaaaaaaaaaaaaaaaaa', ALL);
    await Promise.all(env.clients.map((c) => c.hset(`${p}meta:tok-hash-aaaaaaaaaaaaaaaaaa`, { owner: 'old-layout' })));
    await put(p, ['bad'], 'tok-bad-aaaaaaaaaaaaaaaaaaa', ALL, '{"owner": "cut');
    await put(p, ['array'], 'tok-array-aaaaaaaaaaaaaaaaa', ALL, '["owner"]');
    await put(p, ['mixed'], 'tok-mixed-aaaaaaaaaaaaaaaaa', ALL, '{"owner":"m","pid":12,"fence":null}');
    // The old layout, by resource, is never read.
    await put(p, ['old'], 'tok-old-aaaaaaaaaaaaaaaaaaa', ALL);
    await Promise.all(env.clients.map((c) => c.hset(`${p}meta:old`, { owner: 'by-resource' })));

    for (const metaShare of [undefined, { index: 0, of: 1 }]) {
      const snap = await snapshot(env.clients, { keyPrefix: p, metaShare });
      expect(snap.nodes.every((n) => n.ok)).toBe(true);
      const locks = byResource(snap.locks);
      expect([...locks.keys()]).toEqual(['array', 'bad', 'hash', 'mixed', 'old']);
      expect(['array', 'bad', 'hash', 'old'].map((r) => locks.get(r)!.meta)).toEqual([null, null, null, null]);
      expect(locks.get('mixed')).toMatchObject({ meta: { owner: 'm' }, fence: null });
    }
    for (const r of ['hash', 'bad', 'array', 'old']) {
      const detail = await lockDetail(env.clients, r, { keyPrefix: p });
      expect(detail.nodes.every((n) => n.ok)).toBe(true);
      expect(detail.view).toMatchObject({ state: 'held', meta: null });
    }
    expect((await lockDetail(env.clients, 'mixed', { keyPrefix: p })).view!.meta).toEqual({ owner: 'm' });
  });

  it('fills the metadata a key\'s share node could not read from a holder, by its token', async () => {
    const p = uniquePrefix('fill');
    // 200 keys on nodes 1-2 only: most keys' share node (of 5) holds nothing, so the fill reads them.
    const pipes = [env.clients[0]!.pipeline(), env.clients[1]!.pipeline()];
    for (let i = 0; i < 200; i++) {
      for (const pl of pipes) pl.set(`${p}lock:k${i}`, `tok-fill-${i}`, 'PX', 30_000).set(`${p}meta:tok-fill-${i}`, JSON.stringify({ owner: `o${i}` }), 'PX', 30_000);
    }
    await Promise.all(pipes.map((pl) => pl.exec()));
    const snap = await snapshot(env.clients, { keyPrefix: p });
    expect(snap.locks).toHaveLength(200);
    expect(snap.locks.every((l) => l.state === 'partial' && l.meta?.owner === `o${l.resource.slice(1)}`)).toBe(true);
  });
});
