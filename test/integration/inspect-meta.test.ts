import { describe, expect, it } from 'vitest';
import { LockGrouper, lockDetail, readLocks, scanNode, snapshot, type QuorumView } from '@/lib/inspect';
import { fillMissingMeta } from '@/lib/inspect/meta-fill';
import { uniquePrefix } from '../support/cluster';
import { fiveNodeClients, putLock } from '../support/locks';

/**
 * Holder metadata inside the lock key's value: `<prefix>lock:<resource>` = `<token> <metadata
 * JSON>`, so the metadata on a node always belongs to the token that node holds. A bare token,
 * bad JSON or a non-object after the space is "none"; old `<prefix>meta:<token>` keys are never read.
 */

const env = fiveNodeClients();

const ALL = [1, 2, 3, 4, 5];

/** Lock keys of `resources` = `<token> <meta>` on `nodes` (the bare token without meta). */
function put(p: string, resources: string[], token: string, nodes: number[], meta?: Record<string, string> | string) {
  return putLock(env.clients, p, resources, token, nodes, { meta });
}

const byResource = (locks: QuorumView[]) => new Map(locks.map((l) => [l.resource, l]));

describe('holder metadata in the lock value, on real nodes', () => {
  it('reads the metadata of every resource of a multi-resource lock, and keeps it out of the token', async () => {
    const p = uniquePrefix('multi');
    await put(p, ['a', 'b', 'c'], 'tok-multi-aaaaaaaaaaaaaaaaa', ALL, { owner: 'h:1', fence: '7', purpose: 'batch' });
    expect(await env.clients[0]!.get(`${p}lock:a`)).toBe('tok-multi-aaaaaaaaaaaaaaaaa {"owner":"h:1","fence":"7","purpose":"batch"}');
    const locks = byResource((await snapshot(env.clients, { keyPrefix: p })).locks);
    for (const r of ['a', 'b', 'c']) {
      expect(locks.get(r)).toMatchObject({
        state: 'held',
        majorityToken: 'tok-multi-aaaaaaaaaaaaaaaaa',
        meta: { owner: 'h:1', purpose: 'batch' },
        fence: 7,
      });
      expect(locks.get(r)!.cells.every((c) => c.token === 'tok-multi-aaaaaaaaaaaaaaaaa')).toBe(true);
    }
    const detail = await lockDetail(env.clients, 'b', { keyPrefix: p });
    expect(detail.view).toMatchObject({ majorityToken: 'tok-multi-aaaaaaaaaaaaaaaaa', fence: 7 });
    expect(detail.view!.cells.map((c) => c.meta?.owner)).toEqual(['h:1', 'h:1', 'h:1', 'h:1', 'h:1']);
    const read = await readLocks(env.clients, [{ resource: 'c', key: `${p}lock:c` }], { keyPrefix: p });
    expect(read.views[0]).toMatchObject({
      majorityToken: 'tok-multi-aaaaaaaaaaaaaaaaa',
      meta: { owner: 'h:1', fence: '7', purpose: 'batch' },
    });
  });

  it('gives each node the metadata of the token it holds; a bare token has none, and old meta keys are never read', async () => {
    const p = uniquePrefix('per-token');
    // A won nodes 1-3; B holds nodes 4-5 with a bare token (no metadata).
    await put(p, ['r'], 'tok-A-aaaaaaaaaaaaaaaaaaaaa', [1, 2, 3], { owner: 'A' });
    await put(p, ['r'], 'tok-B-bbbbbbbbbbbbbbbbbbbbb', [4, 5]);
    // Keys of the old layout (`<prefix>meta:<token>`) are leftovers now: never read.
    await Promise.all(
      env.clients.map((c) => c.set(`${p}meta:tok-B-bbbbbbbbbbbbbbbbbbbbb`, JSON.stringify({ owner: 'old-B' }), 'PX', 30_000)),
    );
    await put(p, ['bare'], 'tok-bare-ccccccccccccccccccc', ALL);
    await Promise.all(
      env.clients.map((c) => c.set(`${p}meta:tok-bare-ccccccccccccccccccc`, JSON.stringify({ owner: 'old' }), 'PX', 30_000)),
    );

    // Every node sends every key's metadata; then the default (one share node per key, the
    // majority token's metadata fetched afterwards when that node held another token).
    for (const metaShare of [{ index: 0, of: 1 }, undefined]) {
      const locks = byResource((await snapshot(env.clients, { keyPrefix: p, metaShare })).locks);
      expect([...locks.keys()]).toEqual(['bare', 'r']);
      expect(locks.get('r')).toMatchObject({
        state: 'held',
        holders: 3,
        majorityToken: 'tok-A-aaaaaaaaaaaaaaaaaaaaa',
        meta: { owner: 'A' },
      });
      expect(
        locks
          .get('r')!
          .cells.slice(3)
          .map((c) => [c.token, c.meta]),
      ).toEqual([
        ['tok-B-bbbbbbbbbbbbbbbbbbbbb', null],
        ['tok-B-bbbbbbbbbbbbbbbbbbbbb', null],
      ]);
      expect(locks.get('bare')).toMatchObject({ state: 'held', majorityToken: 'tok-bare-ccccccccccccccccccc', meta: null });
    }
    expect(
      (await snapshot(env.clients, { keyPrefix: p, metaShare: { index: 0, of: 1 } })).locks
        .find((l) => l.resource === 'r')!
        .cells.map((c) => c.meta?.owner ?? null),
    ).toEqual(['A', 'A', 'A', null, null]);
    const detail = await lockDetail(env.clients, 'r', { keyPrefix: p });
    expect(detail.view!.cells.map((c) => [c.token, c.meta?.owner ?? null])).toEqual([
      ['tok-A-aaaaaaaaaaaaaaaaaaaaa', 'A'],
      ['tok-A-aaaaaaaaaaaaaaaaaaaaa', 'A'],
      ['tok-A-aaaaaaaaaaaaaaaaaaaaa', 'A'],
      ['tok-B-bbbbbbbbbbbbbbbbbbbbb', null],
      ['tok-B-bbbbbbbbbbbbbbbbbbbbb', null],
    ]);
    expect((await lockDetail(env.clients, 'bare', { keyPrefix: p })).view).toMatchObject({ state: 'held', meta: null });
    const scan = await scanNode(env.clients[3]!, 4, { keyPrefix: p });
    expect(scan.keys.find((k) => k.resource === 'r')).toMatchObject({ token: 'tok-B-bbbbbbbbbbbbbbbbbbbbb', meta: null, metaRead: true });
    const mine = await scanNode(env.clients[0]!, 1, { keyPrefix: p });
    expect(mine.keys.find((k) => k.resource === 'r')).toMatchObject({
      token: 'tok-A-aaaaaaaaaaaaaaaaaaaaa',
      meta: { owner: 'A' },
      metaRead: true,
    });
    // Only lock keys are scanned: the old meta keys are not in the pattern.
    expect(mine.keys.map((k) => k.resource).sort()).toEqual(['bare', 'r']);
  });

  it("reads a split lock's metadata per token, and the majority holder's for the view", async () => {
    const p = uniquePrefix('split');
    await put(p, ['s'], 'tok-S1-aaaaaaaaaaaaaaaaaaaa', [1, 2], { owner: 'one' });
    await put(p, ['s'], 'tok-S2-bbbbbbbbbbbbbbbbbbbb', [3, 4], { owner: 'two' });
    const detail = await lockDetail(env.clients, 's', { keyPrefix: p });
    expect(detail.view).toMatchObject({ state: 'split', tokens: 2 });
    expect(detail.view!.cells.map((c) => c.meta?.owner ?? null)).toEqual(['one', 'one', 'two', 'two', null]);
    const snap = await snapshot(env.clients, { keyPrefix: p, metaShare: { index: 0, of: 1 } });
    expect(snap.locks[0]!.cells.map((c) => c.meta?.owner ?? null)).toEqual(['one', 'one', 'two', 'two', null]);
  });

  it('treats bad JSON, a non-object, an empty tail and non-string fields after the token as no metadata, without failing', async () => {
    const p = uniquePrefix('odd-meta');
    const tok = (r: string) => `tok-${r}-${'a'.repeat(22 - r.length)}`;
    await put(p, ['bad'], tok('bad'), ALL, '{"owner": "cut');
    await put(p, ['array'], tok('array'), ALL, '["owner"]');
    await put(p, ['empty'], tok('empty'), ALL, '');
    await put(p, ['text'], tok('text'), ALL, 'owner=someone else');
    await put(p, ['mixed'], tok('mixed'), ALL, '{"owner":"m","pid":12,"fence":null}');
    await put(p, ['spaces'], tok('spaces'), ALL, '{"owner":"a b c","purpose":" x "}');
    const none = ['array', 'bad', 'empty', 'text'];

    for (const metaShare of [undefined, { index: 0, of: 1 }]) {
      const snap = await snapshot(env.clients, { keyPrefix: p, metaShare });
      expect(snap.nodes.every((n) => n.ok)).toBe(true);
      const locks = byResource(snap.locks);
      expect([...locks.keys()]).toEqual(['array', 'bad', 'empty', 'mixed', 'spaces', 'text']);
      expect(none.map((r) => locks.get(r)!.meta)).toEqual([null, null, null, null]);
      // The token is everything before the first space, whatever follows it.
      for (const [r, lock] of locks) expect(lock.majorityToken).toBe(tok(r));
      expect(locks.get('mixed')).toMatchObject({ state: 'held', meta: { owner: 'm' }, fence: null });
      expect(locks.get('spaces')!.meta).toEqual({ owner: 'a b c', purpose: ' x ' });
    }
    for (const r of none) {
      const detail = await lockDetail(env.clients, r, { keyPrefix: p });
      expect(detail.nodes.every((n) => n.ok)).toBe(true);
      expect(detail.view).toMatchObject({ state: 'held', holders: 5, meta: null, majorityToken: tok(r) });
    }
    expect((await lockDetail(env.clients, 'mixed', { keyPrefix: p })).view!.meta).toEqual({ owner: 'm' });
    const read = await readLocks(
      env.clients,
      [...none, 'spaces'].map((r) => ({ resource: r, key: `${p}lock:${r}` })),
      { keyPrefix: p },
    );
    expect(read.views.map((v) => [v.resource, v.majorityToken, v.meta])).toEqual([
      ['array', tok('array'), null],
      ['bad', tok('bad'), null],
      ['empty', tok('empty'), null],
      ['spaces', tok('spaces'), { owner: 'a b c', purpose: ' x ' }],
      ['text', tok('text'), null],
    ]);
  });

  it('keeps the raw value of a key outside our layout, spaces and all, with no metadata', async () => {
    const p = uniquePrefix('foreign');
    const key = `${p}orders:7`;
    await Promise.all(env.clients.slice(0, 3).map((c) => c.set(key, 'other-lib {"owner":"x"}', 'PX', 30_000)));
    const snap = await snapshot(env.clients, { keyPrefix: p, pattern: `${p}orders:*` });
    expect(snap.locks.map((l) => [l.resource, l.majorityToken, l.meta])).toEqual([[key, 'other-lib {"owner":"x"}', null]]);
    const detail = await lockDetail(env.clients, 'ignored', { keyPrefix: p, key });
    expect(detail.view).toMatchObject({ state: 'held', holders: 3, majorityToken: 'other-lib {"owner":"x"}', meta: null });
    const read = await readLocks(env.clients, [{ resource: key, key }], { keyPrefix: p });
    expect(read.views[0]).toMatchObject({ majorityToken: 'other-lib {"owner":"x"}', meta: null });
  });

  it("fills the metadata a key's share node could not send from a holder's lock key", async () => {
    const p = uniquePrefix('fill');
    // 200 keys on nodes 1-2 only: most keys' share node (of 5) holds nothing, so the fill reads them.
    const pipes = [env.clients[0]!.pipeline(), env.clients[1]!.pipeline()];
    for (let i = 0; i < 200; i++) {
      for (const pl of pipes) pl.set(`${p}lock:k${i}`, `tok-fill-${i} ${JSON.stringify({ owner: `o${i}` })}`, 'PX', 30_000);
    }
    await Promise.all(pipes.map((pl) => pl.exec()));
    const snap = await snapshot(env.clients, { keyPrefix: p });
    expect(snap.locks).toHaveLength(200);
    expect(
      snap.locks.every(
        (l) =>
          l.state === 'partial' && l.meta?.owner === `o${l.resource.slice(1)}` && l.cells[0]!.token === `tok-fill-${l.resource.slice(1)}`,
      ),
    ).toBe(true);
  });

  it('fills metadata only when the lock key still holds the token the view shows', async () => {
    const p = uniquePrefix('fill-moved');
    await put(p, ['kept'], 'tok-kept', [1], { owner: 'kept' });
    await put(p, ['moved'], 'tok-new', [1], { owner: 'new holder' });
    await env.clients[0]!.hset(`${p}lock:hash`, 'f', 'v');
    // As a scan saw them before: 'moved' held by tok-old, 'hash' a string; no metadata read yet.
    const grouper = new LockGrouper(5, `${p}lock:`);
    grouper.add(0, `${p}lock:kept`, 'tok-kept', 30_000, null, false);
    grouper.add(0, `${p}lock:moved`, 'tok-old', 30_000, null, false);
    grouper.add(0, `${p}lock:hash`, 'tok-hash', 30_000, null, false);
    grouper.add(0, `${p}lock:gone`, 'tok-gone', 30_000, null, false);
    const filled = await fillMissingMeta(env.clients, grouper, { readable: [true, true, true, true, true], timeoutMs: 2_000 });
    expect(filled).toBe(1);
    const views = byResource(
      grouper.views(
        env.clients.map((_, i) => ({ node: i + 1, ok: true })),
        { configuredNodes: 5 },
      ),
    );
    expect(views.get('kept')!.meta).toEqual({ owner: 'kept' });
    expect(['moved', 'hash', 'gone'].map((r) => views.get(r)!.meta)).toEqual([null, null, null]);
  });
});
