import { describe, expect, it } from 'vitest';
import type { LockHistoryResponse } from '../../lib/api/lock-history';
import { apiWithPackageClient } from '../support/api-with-client';

/**
 * A lock held for minutes by a client of the package (not through the lock service) read
 * "unknown (grant not recorded) … held for 0 ms" once force-released, and had no history before.
 * The history now shows the hold the keys carry, its grant time from the holder's own `acquiredAt`
 * (said to be the holder's clock) or, without metadata, from when it was first seen (said so), and
 * a force-release keeps that grant time: the hold's length is the time it was held.
 */
const env = apiWithPackageClient();

const history = async (resource: string) =>
  (await (await env.api.call('GET', `/api/locks/${encodeURIComponent(resource)}/history`, { as: 'viewer' })).json()) as LockHistoryResponse;

describe('the history of a lock taken by a client of the package', () => {
  it('shows the hold while held, and its true length once force-released', async () => {
    const before = Date.now();
    const lock = await env.client.acquire('pc-hist', 20_000, { metadata: { owner: 'inventory-sync@pod-1' } });
    await lock.extend(20_000);
    await lock.extend(20_000);
    const held = await history('pc-hist');
    expect(held.holds).toHaveLength(1);
    expect(held.holds[0]).toMatchObject({
      ended: 'held',
      grantSeen: false,
      principal: null,
      grantTime: 'holder-clock',
      extensions: 2,
      metadata: { owner: 'inventory-sync@pod-1' },
    });
    expect(held.holds[0]!.grantedAt).toBeGreaterThanOrEqual(before - 1_000);
    expect(held.holds[0]!.grantedAt).toBeLessThanOrEqual(Date.now());

    await new Promise((r) => setTimeout(r, 1_200)); // work: held a while
    const res = await env.api.call('POST', '/api/locks/pc-hist/force-release', {
      as: 'operator',
      body: { token: lock.token, reason: 'holder wedged', confirmLiveHolder: true },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    await expect.poll(async () => (await history('pc-hist')).holds[0]?.ended, { timeout: 5_000 }).toBe('force-released');
    const ended = (await history('pc-hist')).holds;
    expect(ended).toHaveLength(1);
    expect(ended[0]).toMatchObject({ grantTime: 'holder-clock', metadata: { owner: 'inventory-sync@pod-1' } });
    expect(ended[0]!.grantedAt).toBe(held.holds[0]!.grantedAt);
    // Never "held for 0 ms": the hold lasted from the grant to the force-release.
    expect(ended[0]!.endedAt! - ended[0]!.grantedAt).toBeGreaterThanOrEqual(1_200);
  });

  it('a key without metadata is "first seen", never given a grant time it does not know', async () => {
    for (const id of [1, 2, 3]) {
      const c = env.api.cluster.client(id);
      if (c.status === 'wait') await c.connect();
      await c.set('rl:lock:pc-bare', 'bare-token-0123456789', 'PX', 20_000);
    }
    const seenAfter = Date.now();
    const h = await history('pc-bare');
    expect(h.holds).toHaveLength(1);
    expect(h.holds[0]).toMatchObject({ ended: 'held', grantSeen: false, grantTime: 'first-seen', principal: null });
    expect(h.holds[0]!.grantedAt).toBeGreaterThanOrEqual(seenAfter - 1_000);
  });
});
