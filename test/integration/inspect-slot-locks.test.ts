import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rwIntentKey, semaphoreSlotKey } from '@redlock-console/redlock';
import type { RwGrantView } from '../../lib/api/rwlocks';
import type { PermitView } from '../../lib/api/semaphores';
import type { SlotLockDetailResponse, SlotLockListResponse } from '../../lib/api/slot-locks';
import { CONFIG_DEFAULTS } from '../../lib/config/env';
import { API_KEY, METRICS_TOKEN, startApi, type ApiHarness, okJson as ok } from '../support/api';
import { withoutReplica } from '../support/metrics-text';

/**
 * The console's view of semaphores and read-write locks (GET /api/slot-locks, …/{kind}/{resource}),
 * on three real masters: slot keys scanned from every node and judged per key by the quorum (a
 * key on one node only is no permit), holders grouped by token, readers, the writer and a waiting
 * writer's intent told apart.
 */
let api: ApiHarness;
const prefix = CONFIG_DEFAULTS.keyPrefix;
beforeAll(async () => {
  api = await startApi({ nodes: 3, maxTtlMs: 30_000 });
  process.env.REDLOCK_API_KEYS = `test-client=${API_KEY}`;
});
afterAll(async () => {
  await api?.stop();
});

const permit = async (resource: string, limit: number, permits = 1) =>
  ok<PermitView>(
    await api.call('POST', '/api/semaphores', {
      as: 'client',
      body: { resource, limit, permits, ttlMs: 20_000, metadata: { owner: 'etl' } },
    }),
  );
const rw = async (resource: string, mode: 'read' | 'write') =>
  ok<RwGrantView>(await api.call('POST', `/api/rwlocks/${resource}/${mode}`, { as: 'client', body: { ttlMs: 20_000, maxReaders: 4 } }));

/** Write `value` at `key` on the given nodes only (a leftover of a failed attempt, or a planted key). */
async function plant(key: string, value: string, nodes: number[], ttlMs = 20_000): Promise<void> {
  for (const id of nodes) {
    const c = api.cluster.client(id);
    if (c.status === 'wait') await c.connect();
    await c.set(key, value, 'PX', ttlMs);
  }
}

describe('semaphores and read-write locks in the console', () => {
  it('lists a semaphore as held/limit with its holders by token, counting only slots held on a quorum', async () => {
    const a = await permit('exports', 3, 2);
    const b = await permit('exports', 3);
    // One node only: not a permit (a per-node count would call the semaphore over its limit).
    await plant(semaphoreSlotKey(prefix, 'lonely', 0), 'lone-token {"limit":"2"}', [1]);
    const list = await ok<SlotLockListResponse>(await api.call('GET', '/api/slot-locks?kind=semaphore', { as: 'viewer' }));
    expect(list.scans.map((s) => s.kind)).toEqual(['semaphore']);
    expect(list.scans[0]!.nodes.every((n) => n.ok)).toBe(true);
    const exports = list.items.find((i) => i.resource === 'exports')!;
    expect(exports).toMatchObject({ kind: 'semaphore', limit: 3, held: 3, mode: null, unsettled: 0 });
    expect(exports.holders.map((h) => [h.token, h.slots.length])).toEqual(
      [a, b].sort((x, y) => x.slots[0]! - y.slots[0]!).map((p) => [p.token, p.slots.length]),
    );
    expect(exports.holders.find((h) => h.token === a.token)).toMatchObject({ role: 'permit', slots: a.slots, fence: a.fence });
    expect(exports.holders[0]!.meta).toMatchObject({ owner: 'etl' });
    const lonely = list.items.find((i) => i.resource === 'lonely')!;
    expect(lonely).toMatchObject({ held: 0, holders: [], unsettled: 1, limit: 2 });
    expect(list.counts.semaphore).toBeGreaterThanOrEqual(2);
  });

  it("a semaphore's detail reads every slot key on every node: token, TTL and metadata per cell", async () => {
    const p = await permit('reports', 2);
    const detail = await ok<SlotLockDetailResponse>(await api.call('GET', '/api/slot-locks/semaphore/reports', { as: 'viewer' }));
    expect(detail).toMatchObject({ kind: 'semaphore', resource: 'reports', quorum: 2 });
    expect(detail.nodes.map((n) => n.ok)).toEqual([true, true, true]);
    const row = detail.lock!.rows.find((r) => r.slot === p.slots[0])!;
    expect(row.view.key).toBe(semaphoreSlotKey(prefix, 'reports', p.slots[0]!));
    expect(row.view.majorityToken).toBe(p.token);
    expect(row.view.fence).toBe(p.fence);
    const held = row.view.cells.filter((c) => c.token === p.token);
    expect(held.length).toBeGreaterThanOrEqual(2);
    for (const cell of held) {
      expect(cell.pttlMs).toBeGreaterThan(10_000);
      expect(cell.meta).toMatchObject({ owner: 'etl', limit: '2' });
    }
    const none = await ok<SlotLockDetailResponse>(await api.call('GET', '/api/slot-locks/semaphore/nothing-here', { as: 'viewer' }));
    expect(none.lock).toBeNull();
  });

  it('lists a read-write lock as N readers, as the writer, and shows a waiting writer', async () => {
    const r1 = await rw('doc', 'read');
    const r2 = await rw('doc', 'read');
    await rw('ledger', 'write');
    // A waiting writer's intent, on a quorum (two of three nodes).
    await plant(rwIntentKey(prefix, 'doc'), 'intent-token {"rw":"intent","limit":"4","owner":"migrator"}', [1, 2]);
    const list = await ok<SlotLockListResponse>(await api.call('GET', '/api/slot-locks?kind=rwlock', { as: 'viewer' }));
    const doc = list.items.find((i) => i.resource === 'doc')!;
    expect(doc).toMatchObject({ kind: 'rwlock', mode: 'read', held: 2, limit: 4 });
    expect(doc.holders.map((h) => h.role)).toEqual(['reader', 'reader']);
    expect(new Set(doc.holders.map((h) => h.token))).toEqual(new Set([r1.token, r2.token]));
    expect(doc.intent).toMatchObject({ token: 'intent-token', role: 'intent', meta: { owner: 'migrator' } });
    const ledger = list.items.find((i) => i.resource === 'ledger')!;
    expect(ledger).toMatchObject({ mode: 'write', held: 4, intent: null });
    expect(ledger.holders).toHaveLength(1);
    expect(ledger.holders[0]).toMatchObject({ role: 'writer', slots: [0, 1, 2, 3] });
    const detail = await ok<SlotLockDetailResponse>(await api.call('GET', '/api/slot-locks/rwlock/doc', { as: 'viewer' }));
    expect(detail.lock!.rows.at(-1)).toMatchObject({ slot: null, view: { majorityToken: 'intent-token' } });
  });

  it('shares one scan per kind between readers: a second listing right after the first is the same read', async () => {
    const first = await ok<SlotLockListResponse>(await api.call('GET', '/api/slot-locks?kind=semaphore', { as: 'viewer' }));
    await plant(semaphoreSlotKey(prefix, 'late', 0), 'late-token {"limit":"1"}', [1, 2, 3]);
    const second = await ok<SlotLockListResponse>(await api.call('GET', '/api/slot-locks?kind=semaphore', { as: 'operator' }));
    expect(second.readAt).toBe(first.readAt);
    expect(second.items.some((i) => i.resource === 'late')).toBe(false);
    // The detail reads the keys directly: it sees the new permit at once.
    const detail = await ok<SlotLockDetailResponse>(await api.call('GET', '/api/slot-locks/semaphore/late', { as: 'viewer' }));
    expect(detail.lock).toMatchObject({ held: 1, limit: 1 });
  });

  it('the metrics count semaphores, read-write locks and their holders on a quorum by kind (no series per lock)', async () => {
    const scrape = async () =>
      withoutReplica(await (await api.call('GET', '/api/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text());
    const value = (text: string, name: string, kind: string) =>
      Number(new RegExp(`^${name}\\{kind="${kind}"\\} (\\S+)$`, 'm').exec(text)?.[1]);
    const list = await ok<SlotLockListResponse>(await api.call('GET', '/api/slot-locks', { as: 'viewer' }));
    const text = await scrape();
    for (const kind of ['semaphore', 'rwlock'] as const) {
      const items = list.items.filter((i) => i.kind === kind);
      expect(value(text, 'redlock_slot_locks', kind)).toBe(items.length);
      expect(value(text, 'redlock_slot_holders', kind)).toBe(items.reduce((sum, i) => sum + i.holders.length, 0));
    }
    expect(value(text, 'redlock_slot_holders', 'semaphore')).toBeGreaterThanOrEqual(2); // exports' two permits at least
    expect(text).not.toMatch(/redlock_slot_\w+\{[^}]*resource=/);
  });

  it('searches by name and refuses an unknown kind or a bad name with a 400', async () => {
    const found = await ok<SlotLockListResponse>(await api.call('GET', '/api/slot-locks?search=EXPO', { as: 'viewer' }));
    expect(found.items.map((i) => i.resource)).toEqual(['exports']);
    expect(found.scans.map((s) => s.kind)).toEqual(['semaphore', 'rwlock']);
    expect((await api.call('GET', '/api/slot-locks?kind=mutex', { as: 'viewer' })).status).toBe(400);
    expect((await api.call('GET', '/api/slot-locks/queue/doc', { as: 'viewer' })).status).toBe(400);
    expect((await api.call('GET', '/api/slot-locks', { as: 'anonymous' })).status).toBe(401);
  });
});
