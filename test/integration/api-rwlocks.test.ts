import { describe, expect, it } from 'vitest';
import { rwSlotKey } from '@redlock-console/redlock';
import type { RwGrantView } from '../../lib/api/rwlocks';
import type { SlotsExtendResponse, SlotsReleaseResponse } from '../../lib/api/semaphores';
import { CONFIG_DEFAULTS } from '../../lib/config/env';
import { refusedJson as failed, okJson as ok } from '../support/api';
import { QUOTA_KEY, slotLockApi } from '../support/slot-lock-api';

/**
 * The read-write lock over HTTP (POST /api/rwlocks/{resource}/read, /write, /extend, /release),
 * answered by the lock service with the mutex's contract: API keys and quotas, the same checks in
 * the same order, errors through the one mapper, the holder hidden from API keys, lock history.
 */
const env = slotLockApi({ quotaHeld: 1 });
type As = 'client' | 'operator' | 'viewer' | 'anonymous';

const take = (resource: string, mode: 'read' | 'write', body: Record<string, unknown> = {}, as: As = 'client') =>
  env.api.call('POST', `/api/rwlocks/${encodeURIComponent(resource)}/${mode}`, { as, body: { ttlMs: 10_000, maxReaders: 4, ...body } });
const release = (resource: string, grant: { token: string; slots: number[] }) =>
  env.api.call('POST', `/api/rwlocks/${encodeURIComponent(resource)}/release`, {
    as: 'client',
    body: { token: grant.token, slots: grant.slots },
  });

/** The token each node's reader slot key holds (null where absent). */
const slotTokens = (resource: string, slot: number) => env.tokensAt(rwSlotKey(CONFIG_DEFAULTS.keyPrefix, resource, slot));

describe('read-write locks over HTTP', () => {
  it('two readers hold together; extend and release by token and slots; then a writer gets every slot with a higher fence', async () => {
    const a = await ok<RwGrantView>(await take('doc', 'read', { metadata: { purpose: 'report' } }));
    const b = await ok<RwGrantView>(await take('doc', 'read'));
    expect(a).toMatchObject({ resource: 'doc', mode: 'read', maxReaders: 4 });
    expect(a.slots).toHaveLength(1);
    expect(b.slots).toHaveLength(1);
    expect(a.slots[0]).not.toBe(b.slots[0]);
    expect(a.fences).toEqual([{ slot: a.slots[0], fence: a.fence }]);
    expect((await slotTokens('doc', a.slots[0]!)).filter((t) => t === a.token).length).toBeGreaterThanOrEqual(2);

    const extended = await ok<SlotsExtendResponse>(
      await env.api.call('POST', '/api/rwlocks/doc/extend', { as: 'client', body: { token: a.token, slots: a.slots, ttlMs: 25_000 } }),
    );
    expect(extended.validityMs).toBeGreaterThan(20_000);
    // A writer is refused while readers hold.
    await failed(await take('doc', 'write', { ttlMs: 2_000 }), 409, 'LOCK_CONTENDED');

    for (const g of [a, b]) expect(await ok<SlotsReleaseResponse>(await release('doc', g))).toMatchObject({ released: true, deleted: 3 });
    const writer = await ok<RwGrantView>(await take('doc', 'write'));
    expect(writer).toMatchObject({ mode: 'write', slots: [0, 1, 2, 3] });
    expect(writer.fence).toBeGreaterThan(Math.max(a.fence!, b.fence!));
    expect(writer.fences).toHaveLength(4);
    expect(await ok<SlotsReleaseResponse>(await release('doc', writer))).toMatchObject({ released: true, deleted: 3 });
  });

  it('contention: a reader that waits behind a writer answers 409 after waitMs, without the holder for an API key', async () => {
    const writer = await ok<RwGrantView>(await take('busy', 'write', { metadata: { owner: 'migrator-3' } }));
    const started = performance.now();
    const refused = await failed(await take('busy', 'read', { waitMs: 400 }), 409, 'LOCK_CONTENDED');
    expect(performance.now() - started).toBeGreaterThanOrEqual(390);
    expect(refused.error.details?.holder ?? null).toBeNull();
    expect(JSON.stringify(refused)).not.toContain('migrator-3');
    expect(JSON.stringify(refused)).not.toContain(writer.token);
    await failed(await take('busy', 'write', { waitMs: 300 }), 409, 'LOCK_CONTENDED');
    // Another maxReaders than the holder's: the caller's to fix.
    const mismatch = await failed(await take('busy', 'write', { maxReaders: 8 }), 409, 'SEMAPHORE_LIMIT_MISMATCH');
    expect(mismatch.error.details).toMatchObject({ recordedLimit: 4, clientLimit: 8 });
    await ok(await release('busy', writer));
  });

  it('bad input is a 400 with a message naming the field', async () => {
    const bad: Array<[string, Record<string, unknown>, string]> = [
      ['/api/rwlocks/x/read', { maxReaders: 4 }, 'BAD_REQUEST'], // no ttlMs
      ['/api/rwlocks/x/read', { ttlMs: 1_000, maxReaders: 0 }, 'BAD_REQUEST'],
      ['/api/rwlocks/x/write', { ttlMs: 1_000, maxReaders: 65 }, 'BAD_REQUEST'],
      ['/api/rwlocks/x/write', { ttlMs: 1_000, mode: 'read' }, 'BAD_REQUEST'],
      ['/api/rwlocks/x/read', { ttlMs: 1_000, metadata: { rw: 'write' } }, 'INVALID_ARGUMENT'],
      ['/api/rwlocks/x/extend', { token: 't', slots: [0] }, 'BAD_REQUEST'], // no ttlMs
      ['/api/rwlocks/x/release', { token: 'a b', slots: [0] }, 'BAD_REQUEST'],
      ['/api/rwlocks/x/release', { token: 't', slots: [64] }, 'INVALID_ARGUMENT'], // past the most reader slots
    ];
    for (const [path, body, code] of bad) {
      const answer = await failed(await env.api.call('POST', path, { as: 'client', body }), 400, code);
      expect(answer.error.message, `${path} ${JSON.stringify(body)}`).toMatch(/\w/);
    }
  });

  it('no key is 401, a viewer 403, a quota refusal 429, and nothing is taken for them', async () => {
    await failed(await take('auth', 'read', {}, 'anonymous'), 401, 'UNAUTHORIZED');
    await failed(await take('auth', 'write', {}, 'viewer'), 403, 'FORBIDDEN');
    await failed(
      await env.api.call('POST', '/api/rwlocks/auth/release', { as: 'viewer', body: { token: 't', slots: [0] } }),
      403,
      'FORBIDDEN',
    );
    for (const slot of [0, 1, 2, 3]) expect(await slotTokens('auth', slot)).toEqual([null, null, null]);

    const asQuota = (mode: 'read' | 'write') =>
      env.api.call('POST', `/api/rwlocks/quota/${mode}`, { headers: { authorization: `Bearer ${QUOTA_KEY}` }, body: { ttlMs: 10_000 } });
    const held = await ok<RwGrantView>(await asQuota('read'));
    const res = await asQuota('read');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await failed(res, 429, 'TOO_MANY_REQUESTS')).error.details).toMatchObject({ quota: 'locks-held' });
    await ok(
      await env.api.call('POST', '/api/rwlocks/quota/release', {
        headers: { authorization: `Bearer ${QUOTA_KEY}` },
        body: { token: held.token, slots: held.slots },
      }),
    );
  });

  it('a release by a wrong token deletes nothing: the writer keeps every slot and readers stay out', async () => {
    const writer = await ok<RwGrantView>(await take('kept', 'write'));
    const wrong = await ok<SlotsReleaseResponse>(
      await env.api.call('POST', '/api/rwlocks/kept/release', { as: 'client', body: { token: 'not-the-writer', slots: writer.slots } }),
    );
    expect(wrong).toMatchObject({ released: false, deleted: 0 });
    for (const slot of writer.slots)
      expect((await slotTokens('kept', slot)).filter((t) => t === writer.token).length).toBeGreaterThanOrEqual(2);
    await failed(await take('kept', 'read', { ttlMs: 1_000 }), 409, 'LOCK_CONTENDED');
    await failed(
      await env.api.call('POST', '/api/rwlocks/kept/extend', { as: 'client', body: { token: 'not-the-writer', slots: [0], ttlMs: 5_000 } }),
      409,
      'LOCK_EXPIRED',
    );
    await ok(await release('kept', writer));
  });
});
