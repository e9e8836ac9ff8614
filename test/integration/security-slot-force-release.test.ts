import { describe, expect, it } from 'vitest';
import { rwIntentKey, rwSlotKey, semaphoreSlotKey } from '@redlock-console/redlock';
import type { AuditResponse } from '../../lib/api/audit';
import type { LockHistoryResponse } from '../../lib/api/lock-history';
import type { SlotForceReleaseResponse } from '../../lib/api/slot-locks';
import { CONFIG_DEFAULTS } from '../../lib/config/env';
import { okJson as ok } from '../support/api';
import { slotLockApi } from '../support/slot-lock-api';

/**
 * Force-release of one semaphore permit's slot or one read-write lock holder
 * (POST /api/slot-locks/{kind}/{resource}/force-release), on three real masters: operators only,
 * CSRF, a reason, an audit entry and a lock-history entry; only the token's own keys on the slots
 * named are deleted, and a wrong token, a token of another slot, a waiting writer's intent, a
 * viewer or a request without CSRF is refused with a 4xx before anything is written.
 */
const env = slotLockApi();
const { permit, rw } = env;
const prefix = CONFIG_DEFAULTS.keyPrefix;
const forceRelease = (
  kind: string,
  resource: string,
  body: Record<string, unknown>,
  as: 'operator' | 'viewer' | 'client' = 'operator',
  headers?: Record<string, string>,
) =>
  env.api.call('POST', `/api/slot-locks/${kind}/${resource}/force-release`, { as, body: { reason: 'stuck batch job', ...body }, headers });

const tokens = env.tokensAt;
const holds = async (key: string, token: string) => (await tokens(key)).filter((t) => t === token).length;

async function audited(target: string): Promise<AuditResponse['entries']> {
  const res = await ok<AuditResponse>(await env.api.call('GET', '/api/audit?action=lock.force-release&format=json', { as: 'operator' }));
  return res.entries.filter((e) => e.target === target);
}

describe('force-release of a permit or a read-write lock holder', () => {
  it("releases one slot of a permit: that slot's keys only, audited, in the lock history under the slot's name", async () => {
    const a = await permit('batch', 2);
    const b = await permit('batch');
    const [slot, kept] = a.slots as [number, number];
    const res = await ok<SlotForceReleaseResponse>(await forceRelease('semaphore', 'batch', { token: a.token, slot }));
    expect(res).toMatchObject({ kind: 'semaphore', resource: 'batch', slots: [slot] });
    expect(res.deleted).toBeGreaterThanOrEqual(2);
    expect(res.results[0]!.nodes.filter((n) => n.outcome === 'deleted').length).toBe(res.deleted);
    expect(await tokens(semaphoreSlotKey(prefix, 'batch', slot))).toEqual([null, null, null]);
    // The permit's other slot and the other permit are untouched.
    expect(await holds(semaphoreSlotKey(prefix, 'batch', kept), a.token)).toBeGreaterThanOrEqual(2);
    expect(await holds(semaphoreSlotKey(prefix, 'batch', b.slots[0]!), b.token)).toBeGreaterThanOrEqual(2);
    const [entry] = await audited(`sem:batch:${slot}`);
    expect(entry).toMatchObject({ id: res.auditId, actor: 'op', role: 'operator', outcome: 'ok', reason: 'stuck batch job' });
    expect(entry!.holder).toContain('owner=etl');
    await expect
      .poll(
        async () => {
          const history = await ok<LockHistoryResponse>(
            await env.api.call('GET', `/api/locks/${encodeURIComponent(`sem:batch:${slot}`)}/history`, { as: 'operator' }),
          );
          return history.entries.filter((e) => e.event === 'force-released').map((e) => e.principal);
        },
        { timeout: 10_000, interval: 200 },
      )
      .toContain('operator:op');
  });

  it('refuses a wrong token, a token of another slot, a missing slot, a viewer, an API key and a missing CSRF token, deleting nothing', async () => {
    const a = await permit('guarded');
    const b = await permit('guarded');
    const bKey = semaphoreSlotKey(prefix, 'guarded', b.slots[0]!);
    const before = await audited(`sem:guarded:${b.slots[0]}`);
    const refusals: Array<[Response, number]> = [
      [await forceRelease('semaphore', 'guarded', { token: 'not-a-holder', slot: b.slots[0] }), 409],
      // a's token, b's slot: the token of another slot.
      [await forceRelease('semaphore', 'guarded', { token: a.token, slot: b.slots[0] }), 409],
      [await forceRelease('semaphore', 'guarded', { token: b.token }), 400],
      [await forceRelease('semaphore', 'guarded', { token: b.token, slot: b.slots[0], reason: '' }), 400],
      [await forceRelease('semaphore', 'guarded', { token: b.token, slot: b.slots[0] }, 'viewer'), 403],
      [await forceRelease('semaphore', 'guarded', { token: b.token, slot: b.slots[0] }, 'client'), 403],
      [await forceRelease('semaphore', 'guarded', { token: b.token, slot: b.slots[0] }, 'operator', { 'x-csrf-token': 'forged' }), 403],
      [await forceRelease('mutex', 'guarded', { token: b.token, slot: b.slots[0] }), 400],
    ];
    for (const [res, status] of refusals) {
      const text = await res.text();
      expect(res.status, text).toBe(status);
      expect((JSON.parse(text) as { error: { message: string } }).error.message.length).toBeGreaterThan(0);
    }
    expect(await holds(bKey, b.token)).toBeGreaterThanOrEqual(2);
    expect(await holds(semaphoreSlotKey(prefix, 'guarded', a.slots[0]!), a.token)).toBeGreaterThanOrEqual(2);
    expect(await audited(`sem:guarded:${b.slots[0]}`)).toEqual(before);
  });

  it("releases one reader's slot, or every slot of the writer; a waiting writer's intent is refused", async () => {
    const r1 = await rw('catalog', 'read');
    const r2 = await rw('catalog', 'read');
    const res = await ok<SlotForceReleaseResponse>(await forceRelease('rwlock', 'catalog', { token: r1.token }));
    expect(res.slots).toEqual(r1.slots);
    expect(await tokens(rwSlotKey(prefix, 'catalog', r1.slots[0]!))).toEqual([null, null, null]);
    expect(await holds(rwSlotKey(prefix, 'catalog', r2.slots[0]!), r2.token)).toBeGreaterThanOrEqual(2);

    const w = await rw('schema', 'write');
    // The writer is released whole: one of its slots named is refused, nothing deleted.
    const part = await forceRelease('rwlock', 'schema', { token: w.token, slot: 1 });
    expect(part.status, await part.clone().text()).toBe(400);
    for (const slot of [0, 1, 2]) expect(await holds(rwSlotKey(prefix, 'schema', slot), w.token)).toBeGreaterThanOrEqual(2);
    const released = await ok<SlotForceReleaseResponse>(await forceRelease('rwlock', 'schema', { token: w.token }));
    expect(released.slots).toEqual([0, 1, 2]);
    for (const slot of [0, 1, 2]) expect(await tokens(rwSlotKey(prefix, 'schema', slot))).toEqual([null, null, null]);

    // A reader's token named with another reader's slot is another slot's token.
    expect((await forceRelease('rwlock', 'catalog', { token: r2.token, slot: r1.slots[0] })).status).toBe(409);
    const c = env.api.cluster.client(1);
    if (c.status === 'wait') await c.connect();
    await c.set(rwIntentKey(prefix, 'catalog'), 'intent-token {"rw":"intent"}', 'PX', 20_000);
    const intent = await forceRelease('rwlock', 'catalog', { token: 'intent-token' });
    expect(intent.status).toBe(409);
    expect(await tokens(rwIntentKey(prefix, 'catalog'))).toEqual(['intent-token', null, null]);
  });
});
