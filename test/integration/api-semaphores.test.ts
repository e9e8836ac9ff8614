import { describe, expect, it } from 'vitest';
import { semaphoreSlotKey } from '@redlock-console/redlock';
import type { LockHistoryResponse } from '../../lib/api/lock-history';
import type { PermitView, SlotsExtendResponse, SlotsReleaseResponse } from '../../lib/api/semaphores';
import { withoutReplica } from '../support/metrics-text';
import { CONFIG_DEFAULTS } from '../../lib/config/env';
import { METRICS_TOKEN, refusedJson as failed, okJson as ok } from '../support/api';
import { QUOTA_KEY, slotLockApi } from '../support/slot-lock-api';

/**
 * The fenced semaphore over HTTP (POST /api/semaphores, …/{resource}/extend, …/release), answered
 * by the lock service with the mutex's contract: API keys and quotas, the same checks in the same
 * order, errors through the one mapper, the holder hidden from API keys, lock history entries.
 */
const env = slotLockApi({ quotaHeld: 2 });

const acquire = (body: Record<string, unknown>, as: 'client' | 'operator' | 'viewer' | 'anonymous' = 'client') =>
  env.api.call('POST', '/api/semaphores', { as, body: { ttlMs: 10_000, ...body } });

/** The token each node's slot key holds (null where absent). */
const slotTokens = (resource: string, slot: number) => env.tokensAt(semaphoreSlotKey(CONFIG_DEFAULTS.keyPrefix, resource, slot));

describe('semaphores over HTTP', () => {
  it('acquire answers a permit with its slots and a fence per slot; extend and release by token and slots; history has each', async () => {
    const permit = await ok<PermitView>(await acquire({ resource: 'jobs', limit: 3, permits: 2, metadata: { purpose: 'export' } }));
    expect(permit).toMatchObject({ resource: 'jobs', limit: 3 });
    expect(permit.slots).toHaveLength(2);
    expect(permit.fence).toBeGreaterThan(0);
    expect(permit.fences).toEqual(permit.slots.map((slot) => ({ slot, fence: permit.fence })));
    expect(permit.validityMs).toBeGreaterThan(8_000);
    expect(permit.votes.filter((v) => v.vote === 'for').length).toBeGreaterThanOrEqual(2);
    for (const slot of permit.slots)
      expect((await slotTokens('jobs', slot)).filter((t) => t === permit.token).length).toBeGreaterThanOrEqual(2);

    const extended = await ok<SlotsExtendResponse>(
      await env.api.call('POST', '/api/semaphores/jobs/extend', {
        as: 'client',
        body: { token: permit.token, slots: permit.slots, ttlMs: 25_000 },
      }),
    );
    expect(extended.slots).toEqual(permit.slots);
    expect(extended.validityMs).toBeGreaterThan(20_000);

    const released = await ok<SlotsReleaseResponse>(
      await env.api.call('POST', '/api/semaphores/jobs/release', { as: 'client', body: { token: permit.token, slots: permit.slots } }),
    );
    expect(released).toMatchObject({ resource: 'jobs', released: true, deleted: 3, complete: true });
    for (const slot of permit.slots) expect(await slotTokens('jobs', slot)).toEqual([null, null, null]);

    // The lock history, under the slot's name, has the grant, the extend and the release by the API key.
    const slotName = encodeURIComponent(`sem:jobs:${permit.slots[0]}`);
    await expect
      .poll(
        async () => {
          const history = (await (
            await env.api.call('GET', `/api/locks/${slotName}/history`, { as: 'operator' })
          ).json()) as LockHistoryResponse;
          return history.entries.map((e) => `${e.event} ${e.principal}`).sort();
        },
        { timeout: 10_000, interval: 200 },
      )
      .toEqual(['extended client:test-client', 'granted client:test-client', 'released client:test-client']);
  });

  it('contention: with the limit reached, an acquire that waits answers 409 LOCK_CONTENDED after waitMs, without the holder for an API key', async () => {
    const held = await ok<PermitView>(await acquire({ resource: 'one', limit: 1, metadata: { owner: 'batch-7' } }));
    const started = performance.now();
    const refused = await failed(await acquire({ resource: 'one', limit: 1, waitMs: 400 }), 409, 'LOCK_CONTENDED');
    expect(performance.now() - started).toBeGreaterThanOrEqual(390);
    expect(refused.error.details?.holder ?? null).toBeNull();
    expect(JSON.stringify(refused)).not.toContain('batch-7');
    expect(JSON.stringify(refused)).not.toContain(held.token);
    // An operator session may read the locks anyway: it is told who holds the slot (never the token).
    const seen = await failed(await acquire({ resource: 'one', limit: 1 }, 'operator'), 409, 'LOCK_CONTENDED');
    expect(seen.error.details?.holder).toMatchObject({ owner: 'batch-7' });
    expect(JSON.stringify(seen)).not.toContain(held.token);
    await ok(await env.api.call('POST', '/api/semaphores/one/release', { as: 'client', body: { token: held.token, slots: held.slots } }));
  });

  it('a limit another holder does not share: 409 SEMAPHORE_LIMIT_MISMATCH naming both, counted in the metrics', async () => {
    const count = async () => {
      const text = withoutReplica(
        await (await env.api.call('GET', '/api/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text(),
      );
      return Number(/redlock_operations_total\{operation="acquire",outcome="SemaphoreLimitMismatchError"\} (\d+)/.exec(text)?.[1] ?? NaN);
    };
    const before = await count();
    expect(before).toBeGreaterThanOrEqual(0);
    const held = await ok<PermitView>(await acquire({ resource: 'mixed', limit: 2, permits: 2 }));
    const body = await failed(await acquire({ resource: 'mixed', limit: 3, permits: 3 }), 409, 'SEMAPHORE_LIMIT_MISMATCH');
    expect(body.error.details).toMatchObject({ recordedLimit: 2, clientLimit: 3 });
    expect(await count()).toBe(before + 1);
    await ok(await env.api.call('POST', '/api/semaphores/mixed/release', { as: 'client', body: { token: held.token, slots: held.slots } }));
  });

  it('bad input is a 400 with a message naming the field, before any master is asked', async () => {
    const bad: Array<[string, Record<string, unknown>, string]> = [
      ['/api/semaphores', { resource: 's', ttlMs: 1_000 }, 'BAD_REQUEST'], // no limit
      ['/api/semaphores', { resource: 's', limit: 0, ttlMs: 1_000 }, 'BAD_REQUEST'],
      ['/api/semaphores', { resource: 's', limit: 2, ttlMs: 1_000, extra: 1 }, 'BAD_REQUEST'],
      ['/api/semaphores', { resource: 's', limit: 2, permits: 3, ttlMs: 1_000 }, 'INVALID_ARGUMENT'], // more permits than the limit
      ['/api/semaphores', { resource: 's', limit: 2, ttlMs: 1_000, metadata: { limit: '9' } }, 'INVALID_ARGUMENT'],
      ['/api/semaphores', { resource: 's', limit: 2, ttlMs: 60_000 }, 'INVALID_ARGUMENT'], // over the lease ceiling
      ['/api/semaphores/s/extend', { token: 't', slots: [], ttlMs: 1_000 }, 'BAD_REQUEST'],
      ['/api/semaphores/s/extend', { token: 't', slots: [0], ttlMs: -1 }, 'BAD_REQUEST'],
      ['/api/semaphores/s/release', { token: 't', slots: [-1] }, 'BAD_REQUEST'],
      ['/api/semaphores/s/release', { token: 't', slots: [1, 1] }, 'BAD_REQUEST'],
      ['/api/semaphores/s/release', { token: 't', slots: [256] }, 'INVALID_ARGUMENT'], // past the core's largest limit
      ['/api/semaphores/s/release', { slots: [0] }, 'BAD_REQUEST'],
    ];
    for (const [path, body, code] of bad) {
      const res = await env.api.call('POST', path, { as: 'client', body });
      const answer = await failed(res, 400, code);
      expect(answer.error.message, `${path} ${JSON.stringify(body)}`).toMatch(/\w/);
    }
    const badPath = await env.api.call('POST', '/api/semaphores/%E0%A4%A/release', { as: 'client', body: { token: 't', slots: [0] } });
    expect(badPath.status).toBe(400);
  });

  it('no key is 401, a viewer 403, a quota refusal 429 with Retry-After, and nothing is taken for them', async () => {
    await failed(await acquire({ resource: 'auth', limit: 1 }, 'anonymous'), 401, 'UNAUTHORIZED');
    await failed(await env.api.call('POST', '/api/semaphores/auth/release', { body: { token: 't', slots: [0] } }), 401, 'UNAUTHORIZED');
    await failed(await acquire({ resource: 'auth', limit: 1 }, 'viewer'), 403, 'FORBIDDEN');
    await failed(
      await env.api.call('POST', '/api/semaphores/auth/extend', { as: 'viewer', body: { token: 't', slots: [0], ttlMs: 1_000 } }),
      403,
      'FORBIDDEN',
    );
    expect(await slotTokens('auth', 0)).toEqual([null, null, null]);

    // The quota key may hold 2 locks: a permit of 2 slots fills it, a third slot is refused whole.
    const asQuota = (body: Record<string, unknown>) =>
      env.api.call('POST', '/api/semaphores', { headers: { authorization: `Bearer ${QUOTA_KEY}` }, body: { ttlMs: 10_000, ...body } });
    const two = await ok<PermitView>(await asQuota({ resource: 'quota', limit: 5, permits: 2 }));
    const res = await asQuota({ resource: 'quota', limit: 5 });
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const refused = await failed(res, 429, 'TOO_MANY_REQUESTS');
    expect(refused.error.details).toMatchObject({ quota: 'locks-held' });
    // A release by token gives the room back.
    await ok(
      await env.api.call('POST', '/api/semaphores/quota/release', {
        headers: { authorization: `Bearer ${QUOTA_KEY}` },
        body: { token: two.token, slots: two.slots },
      }),
    );
    const again = await ok<PermitView>(await asQuota({ resource: 'quota', limit: 5 }));
    await env.api.call('POST', '/api/semaphores/quota/release', {
      headers: { authorization: `Bearer ${QUOTA_KEY}` },
      body: { token: again.token, slots: again.slots },
    });
  });

  it("a release by a wrong token, or of another permit's slots, deletes nothing; an extend by it is 409 LOCK_EXPIRED", async () => {
    const mine = await ok<PermitView>(await acquire({ resource: 'pair', limit: 2 }));
    const theirs = await ok<PermitView>(await acquire({ resource: 'pair', limit: 2 }));
    const wrong = await ok<SlotsReleaseResponse>(
      await env.api.call('POST', '/api/semaphores/pair/release', { as: 'client', body: { token: mine.token, slots: theirs.slots } }),
    );
    expect(wrong).toMatchObject({ released: false, deleted: 0 });
    const unknown = await ok<SlotsReleaseResponse>(
      await env.api.call('POST', '/api/semaphores/pair/release', { as: 'client', body: { token: 'nobody-holds-this', slots: [0, 1] } }),
    );
    expect(unknown).toMatchObject({ released: false, deleted: 0 });
    expect((await slotTokens('pair', theirs.slots[0]!)).filter((t) => t === theirs.token).length).toBeGreaterThanOrEqual(2);
    expect((await slotTokens('pair', mine.slots[0]!)).filter((t) => t === mine.token).length).toBeGreaterThanOrEqual(2);
    await failed(
      await env.api.call('POST', '/api/semaphores/pair/extend', {
        as: 'client',
        body: { token: mine.token, slots: theirs.slots, ttlMs: 5_000 },
      }),
      409,
      'LOCK_EXPIRED',
    );
    for (const p of [mine, theirs])
      await ok(await env.api.call('POST', '/api/semaphores/pair/release', { as: 'client', body: { token: p.token, slots: p.slots } }));
  });
});
