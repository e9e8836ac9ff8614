import { describe, expect, it } from 'vitest';
import { lockValue, rwSlotKey, semaphoreSlotKey, semaphoreSlotName } from '@redlock-console/redlock';
import type { LockHistoryResponse } from '../../lib/api/lock-history';
import type { LockGrant } from '../../lib/api/locks';
import { slotHistoryResponseSchema, type SlotHistoryResponse } from '../../lib/api/slot-history';
import { CONFIG_DEFAULTS } from '../../lib/config/env';
import { okJson as ok } from '../support/api';
import { slotLockApi } from '../support/slot-lock-api';

/**
 * GET /api/slot-locks/{kind}/{resource}/history on three real masters: the lock history of some
 * slots of a semaphore or read-write lock, merged (each slot is a lock of its own in the history,
 * under its slot name), newest first, each hold with its slots and role. Viewers read it; bad
 * input is a 400 naming what is wrong, and at most 16 slots are read a request.
 */
const env = slotLockApi();
const { permit, rw } = env;
const release = async (root: 'semaphores' | 'rwlocks', resource: string, g: { token: string; slots: number[] }) =>
  ok(await env.api.call('POST', `/api/${root}/${resource}/release`, { as: 'client', body: { token: g.token, slots: g.slots } }));
const history = (kind: string, resource: string, query: string, as: 'viewer' | 'operator' | 'client' | 'anonymous' = 'viewer') =>
  env.api.call('GET', `/api/slot-locks/${kind}/${encodeURIComponent(resource)}/history?${query}`, { as });

/** The history once `ready` holds (the writer flushes every 200 ms: a hold on the keys can be there before its grant). */
async function historyWhen(kind: string, resource: string, query: string, ready: (h: SlotHistoryResponse) => boolean) {
  let last: SlotHistoryResponse | null = null;
  await expect
    .poll(async () => {
      last = slotHistoryResponseSchema.parse(await ok(await history(kind, resource, query)));
      return ready(last);
    })
    .toBe(true);
  return last!;
}

describe('the history of a slot lock', () => {
  it('merges its slots: a released permit, a force-released one and a permit of two slots as one row, newest first', async () => {
    const a = await permit('batch');
    await release('semaphores', 'batch', a);
    const b = await permit('batch');
    await ok(
      await env.api.call('POST', '/api/slot-locks/semaphore/batch/force-release', {
        as: 'operator',
        body: { token: b.token, slot: b.slots[0], reason: 'stuck batch job' },
      }),
    );
    const c = await permit('batch', 2);
    const h = await historyWhen('semaphore', 'batch', 'slots=0,1,2', (r) => r.holds.length === 3 && r.holds.every((x) => x.grantSeen));
    expect(h).toMatchObject({ kind: 'semaphore', resource: 'batch', slots: [0, 1, 2], nodesRead: 3, nodesFailed: 0 });
    expect(h.holds.map((x) => ({ slots: x.slots, role: x.role, ended: x.ended, principal: x.principal, owner: x.metadata.owner }))).toEqual(
      [
        { slots: [...c.slots].sort(), role: 'permit', ended: 'held', principal: 'client:test-client', owner: 'etl' },
        { slots: b.slots, role: 'permit', ended: 'force-released', principal: 'client:test-client', owner: 'etl' },
        { slots: a.slots, role: 'permit', ended: 'released', principal: 'client:test-client', owner: 'etl' },
      ],
    );
    expect(h.holds[0]!.fence).toBe(c.fence);
    // Only the slots asked for: the others' holds are not read.
    const one = await ok<SlotHistoryResponse>(await history('semaphore', 'batch', `slots=${a.slots[0]}`));
    expect(one.holds.every((x) => x.slots.length === 1 && x.slots[0] === a.slots[0])).toBe(true);
    await release('semaphores', 'batch', c);
  });

  it("names a read-write lock's writer as one row over its slots, a reader by its slot", async () => {
    const r = await rw('docs', 'read');
    await release('rwlocks', 'docs', r);
    const w = await rw('docs', 'write');
    await release('rwlocks', 'docs', w);
    const h = await historyWhen(
      'rwlock',
      'docs',
      'slots=0,1,2',
      (x) => x.holds.length === 2 && x.holds.every((y) => y.ended === 'released'),
    );
    expect(h.holds.map((x) => ({ slots: x.slots, role: x.role }))).toEqual([
      { slots: [0, 1, 2], role: 'writer' },
      { slots: r.slots, role: 'reader' },
    ]);
  });

  it('shows a hold taken outside the lock service from the slot keys, while held: unauthenticated, its own grant time', async () => {
    const prefix = CONFIG_DEFAULTS.keyPrefix;
    const acquiredAt = Date.now() - 5_000;
    const meta = (extra: Record<string, string>) =>
      JSON.stringify({ owner: 'pkg-client', acquiredAt: String(acquiredAt), fence: '7', ...extra });
    const write = async (key: string, value: string) => {
      for (const id of [1, 2, 3]) {
        const c = env.api.cluster.client(id);
        if (c.status === 'wait') await c.connect();
        await c.set(key, value, 'PX', 20_000);
      }
    };
    await write(semaphoreSlotKey(prefix, 'pkg', 1), lockValue('pkg-token-1', meta({ limit: '3' })));
    for (const slot of [0, 1, 2])
      await write(rwSlotKey(prefix, 'pkg-rw', slot), lockValue('pkg-writer', meta({ limit: '3', rw: 'write' })));
    const sem = await ok<SlotHistoryResponse>(await history('semaphore', 'pkg', 'slots=0,1,2'));
    expect(sem.holds).toEqual([
      expect.objectContaining({
        slots: [1],
        role: 'permit',
        ended: 'held',
        principal: null,
        grantTime: 'holder-clock',
        grantedAt: acquiredAt,
        fence: 7,
      }),
    ]);
    expect(sem.holds[0]!.metadata.owner).toBe('pkg-client');
    const rwh = await ok<SlotHistoryResponse>(await history('rwlock', 'pkg-rw', 'slots=0,1,2'));
    expect(rwh.holds.map((h) => ({ slots: h.slots, role: h.role, ended: h.ended }))).toEqual([
      { slots: [0, 1, 2], role: 'writer', ended: 'held' },
    ]);
  });

  it('keeps out a mutex that has a slot’s name', async () => {
    const name = semaphoreSlotName('shared', 0);
    const lock = await ok<LockGrant>(await env.api.call('POST', '/api/locks', { as: 'client', body: { resource: name, ttlMs: 20_000 } }));
    // The mutex's grant is in its own history under that name (the stream a slot's history reads)…
    const own = async () =>
      (await ok<LockHistoryResponse>(await env.api.call('GET', `/api/locks/${encodeURIComponent(name)}/history`, { as: 'viewer' }))).holds;
    await expect.poll(async () => (await own()).map((x) => x.grantSeen)).toEqual([true]);
    // …and not in the semaphore's slot 0, held now or not.
    const h = await ok<SlotHistoryResponse>(await history('semaphore', 'shared', 'slots=0'));
    expect(h.holds).toEqual([]);
    await ok(await env.api.call('POST', `/api/locks/${encodeURIComponent(name)}/release`, { as: 'client', body: { token: lock.token } }));
  });

  it('is read by viewers and operators only: an API key and an anonymous caller are refused', async () => {
    expect((await history('semaphore', 'batch', 'slots=0', 'operator')).status).toBe(200);
    expect((await history('semaphore', 'batch', 'slots=0', 'client')).status).toBe(403);
    expect((await history('semaphore', 'batch', 'slots=0', 'anonymous')).status).toBe(401);
  });

  it('answers bad input with a 400 that names it, and reads at most 16 slots a request', async () => {
    const bad: Array<[string, string, RegExp]> = [
      ['semaphore', '', /slots/],
      ['semaphore', 'slots=', /slots/],
      ['semaphore', 'slots=a,b', /slots/],
      ['semaphore', 'slots=-1', /slots/],
      ['semaphore', 'slots=01', /slots/],
      ['semaphore', 'slots=256', /below 256/],
      ['semaphore', `slots=${Array.from({ length: 17 }, (_, i) => i).join(',')}`, /at most 16/],
      ['semaphore', `slots=${'1,'.repeat(150)}1`, /slots/],
      ['semaphore', 'slots=0&limit=0', /limit/],
      ['semaphore', 'slots=0&slot=1', /slot/],
      ['mutex', 'slots=0', /kind/],
    ];
    for (const [kind, query, message] of bad) {
      const res = await history(kind, 'batch', query);
      expect(res.status, `${kind}?${query}`).toBe(400);
      expect(JSON.stringify(await res.json()), `${kind}?${query}`).toMatch(message);
    }
    // The same slot named twice is read once.
    const twice = await ok<SlotHistoryResponse>(await history('semaphore', 'batch', 'slots=2,2,2'));
    expect(twice.slots).toEqual([2]);
  });
});
