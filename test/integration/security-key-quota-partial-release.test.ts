import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PermitView } from '../../lib/api/semaphores';
import { startApi, type ApiHarness } from '../support/api';

/**
 * An API key's `held` quota counts a grant of k resources (a multi-resource lock, a permit of k
 * slots) as k holds. A release of some of them, by the client or an operator's force-release,
 * gives back those only: giving back the whole grant let a key hold more than its quota (take 3,
 * release 1, take 3 again: 5 held under a quota of 3; found in review).
 */
let api: ApiHarness;
beforeAll(async () => {
  process.env.REDLOCK_API_KEY_QUOTAS = 'test-client:held=3';
  api = await startApi({ nodes: 3, maxTtlMs: 30_000 });
  process.env.REDLOCK_API_KEY_QUOTAS = 'test-client:held=3';
});
afterAll(async () => {
  delete process.env.REDLOCK_API_KEY_QUOTAS;
  await api?.stop();
});

const take = (resource: string, permits: number) =>
  api.call('POST', '/api/semaphores', { as: 'client', body: { resource, limit: 8, permits, ttlMs: 20_000 } });

async function held(res: Response): Promise<PermitView> {
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return JSON.parse(text) as PermitView;
}

async function releaseAll(resource: string, permits: Array<{ token: string; slots: number[] }>): Promise<void> {
  for (const body of permits) await (await api.call('POST', `/api/semaphores/${resource}/release`, { as: 'client', body })).text();
}

async function slotsHeld(resource: string): Promise<number> {
  const res = await api.call('GET', `/api/slot-locks/semaphore/${resource}`, { as: 'operator' });
  const body = (await res.json()) as { lock: { held: number } | null };
  return body.lock?.held ?? 0;
}

describe("an API key's held quota (3) and a permit of 3 slots", () => {
  it('the quota holds while the permit is whole', async () => {
    const p = await held(await take('q-control', 3));
    const more = await take('q-control', 1);
    expect(more.status, await more.text()).toBe(429);
    await (await api.call('POST', '/api/semaphores/q-control/release', { as: 'client', body: { token: p.token, slots: p.slots } })).text();
  });

  it("the client's own release of one slot gives back one hold", async () => {
    const p = await held(await take('q-client', 3));
    const one = await api.call('POST', '/api/semaphores/q-client/release', { as: 'client', body: { token: p.token, slots: [p.slots[0]] } });
    expect(one.status, await one.text()).toBe(200);
    const again = await take('q-client', 3);
    const second = again.status === 200 ? (JSON.parse(await again.text()) as PermitView) : (await again.text(), null);
    const slots = await slotsHeld('q-client');
    // Clean up whatever the key holds, so the next test starts from an empty quota.
    await releaseAll('q-client', [
      { token: p.token, slots: p.slots.slice(1) },
      ...(second ? [{ token: second.token, slots: second.slots }] : []),
    ]);
    expect({ status: again.status, slotsHeldByTheKey: slots }).toEqual({ status: 429, slotsHeldByTheKey: 2 });
  });

  it("an operator's force-release of one slot gives back one hold", async () => {
    const p = await held(await take('q-op', 3));
    const fr = await api.call('POST', '/api/slot-locks/semaphore/q-op/force-release', {
      as: 'operator',
      body: { token: p.token, slot: p.slots[0], reason: 'one slot stuck' },
    });
    expect(fr.status, await fr.text()).toBe(200);
    const again = await take('q-op', 3);
    const second = again.status === 200 ? (JSON.parse(await again.text()) as PermitView) : (await again.text(), null);
    const slots = await slotsHeld('q-op');
    await releaseAll('q-op', [
      { token: p.token, slots: p.slots.slice(1) },
      ...(second ? [{ token: second.token, slots: second.slots }] : []),
    ]);
    expect({ status: again.status, slotsHeldByTheKey: slots }).toEqual({ status: 429, slotsHeldByTheKey: 2 });
  });

  it("the client's release of one resource of a three-resource lock gives back one hold", async () => {
    const res = await api.call('POST', '/api/locks', { as: 'client', body: { resources: ['q-m1', 'q-m2', 'q-m3'], ttlMs: 20_000 } });
    const text = await res.text();
    expect(res.status, text).toBe(200);
    const { token } = JSON.parse(text) as { token: string };
    const one = await api.call('POST', '/api/locks/q-m2/release', { as: 'client', body: { token } });
    expect(one.status, await one.text()).toBe(200);
    const again = await api.call('POST', '/api/locks', { as: 'client', body: { resources: ['q-m4', 'q-m5'], ttlMs: 20_000 } });
    expect(again.status, await again.text()).toBe(429);
    const release = await api.call('POST', '/api/locks/q-m1/release', { as: 'client', body: { token, resources: ['q-m1', 'q-m3'] } });
    expect(release.status, await release.text()).toBe(200);
  });

  it('a release naming resources the lock never held, or one given back before, gives back only what it held', async () => {
    const lock = (resources: string[]) => api.call('POST', '/api/locks', { as: 'client', body: { resources, ttlMs: 20_000 } });
    const release = (path: string, body: unknown) => api.call('POST', `/api/locks/${path}/release`, { as: 'client', body });
    const first = await lock(['e-1', 'e-2', 'e-3']);
    const { token } = JSON.parse(await first.text()) as { token: string };
    expect(first.status).toBe(200);
    expect((await release('e-1', { token, resources: ['e-1', 'never-a', 'never-b'] })).status).toBe(200);
    expect((await release('e-1', { token, resources: ['e-1', 'never-c'] })).status).toBe(200);
    const again = await lock(['e-4', 'e-5']);
    const text = await again.text();
    const second = again.status === 200 ? (JSON.parse(text) as { token: string }) : null;
    expect((await release('e-2', { token, resources: ['e-2', 'e-3'] })).status).toBe(200);
    if (second) await (await release('e-4', { token: second.token, resources: ['e-4', 'e-5'] })).text();
    expect(again.status, text).toBe(429);
  });
});
