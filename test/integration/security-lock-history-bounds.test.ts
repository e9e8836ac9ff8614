import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockHistoryResponseSchema, lockServiceLogResponseSchema } from '../../lib/api/lock-history';
import { lockGrantSchema } from '../../lib/api/locks';
import { API_KEY, startApi, type ApiHarness } from '../support/api';

/**
 * One API key erased every key's lock history. ~430 acquires of new resources
 * filled the one index of 2,000 resource streams and `GET /api/locks/invoice-42/history` answered
 * `holds: []`; reads by principal looked at the newest 5,000 entries per master only, so enough
 * entries of one key left `?principal=client:billing` empty. Now the history is bounded per
 * principal: one key's volume pushes out only its own entries, and reads by resource and by
 * principal reach every entry kept.
 */
const BILLING_KEY = 'billing-key-0123456789abcdef01234';
let api: ApiHarness;
beforeAll(async () => {
  api = await startApi({ nodes: 3, maxTtlMs: 10_000 });
  process.env.REDLOCK_API_KEYS = `test-client=${API_KEY},billing=${BILLING_KEY}`;
  // The flood is the point here, not the per-key quotas (security-key-quotas.test.ts): lifted for it.
  process.env.REDLOCK_API_KEY_QUOTAS = 'test-client:held=1000000,rate=1000000,burst=1000000';
});
afterAll(async () => {
  await api?.stop();
});

const billing = { authorization: `Bearer ${BILLING_KEY}` };

describe('the lock history, flooded by one API key', () => {
  it("still has another key's hold, by resource and by principal; the flooding key's own bound is what gives", async () => {
    const { flushLockHistory, LOCK_HISTORY_RETENTION } = await import('../../lib/server/lock-history');
    const { consoleKeys } = await import('../../lib/server/console-keys');
    const granted = await api.call('POST', '/api/locks', { headers: billing, body: { resource: 'invoice-42', ttlMs: 5_000 } });
    expect(granted.status, await granted.clone().text()).toBe(200);
    const lock = lockGrantSchema.parse(await granted.json());
    expect((await api.call('POST', '/api/locks/invoice-42/release', { headers: billing, body: { token: lock.token } })).status).toBe(200);
    await flushLockHistory();

    // The flood: 2,100 locks of 8 new resources each (16,800 resources, 2,100 entries) by test-client.
    const FLOOD = 2_100;
    let next = 0;
    const started = Date.now();
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < FLOOD) {
          const i = next++;
          const resources = Array.from({ length: 8 }, (_, k) => `flood-${i}-${k}`);
          // A busy host can miss a node deadline (503): that lock is taken again, the flood's size is the point.
          for (let attempt = 1; ; attempt++) {
            const res = await api.call('POST', '/api/locks', { as: 'client', body: { resources, ttlMs: 1_000 } });
            const body = await res.text();
            if (res.status === 200) break;
            expect(res.status === 503 && attempt < 5, body).toBe(true);
          }
        }
      }),
    );
    await flushLockHistory();
    const floodMs = Date.now() - started;

    const history = lockHistoryResponseSchema.parse(
      await (await api.call('GET', '/api/locks/invoice-42/history', { as: 'viewer' })).json(),
    );
    expect(history.holds).toHaveLength(1);
    expect(history.holds[0]).toMatchObject({ principal: 'client:billing', ended: 'released', grantSeen: true });

    const log = lockServiceLogResponseSchema.parse(
      await (await api.call('GET', '/api/lock-history?principal=client%3Abilling', { as: 'viewer' })).json(),
    );
    expect(log.entries.map((e) => `${e.event} ${e.resources.join(',')}`)).toEqual(['released invoice-42', 'granted invoice-42']);

    // The flooding key's own: every entry it wrote is in its log (fewer than its bound), its oldest
    // resources are gone (past its bound of resources), its newest are there.
    const own = lockServiceLogResponseSchema.parse(
      await (await api.call('GET', '/api/lock-history?principal=client%3Atest-client&limit=5000', { as: 'viewer' })).json(),
    );
    expect(own.entries.filter((e) => e.resources[0]?.startsWith('flood-'))).toHaveLength(FLOOD);
    const oldest = lockHistoryResponseSchema.parse(await (await api.call('GET', '/api/locks/flood-0-0/history', { as: 'viewer' })).json());
    expect(oldest.holds).toEqual([]);
    const newest = lockHistoryResponseSchema.parse(
      await (await api.call('GET', `/api/locks/flood-${FLOOD - 1}-7/history`, { as: 'viewer' })).json(),
    );
    expect(newest.holds).toHaveLength(1);
    for (const id of [1, 2, 3]) {
      const c = api.cluster.client(id);
      if (c.status === 'wait') await c.connect();
      expect(await c.zcard(consoleKeys().lockHistoryResourcesOf('client:test-client'))).toBeLessThanOrEqual(
        LOCK_HISTORY_RETENTION.resourcesPerPrincipal,
      );
      expect(await c.xlen(consoleKeys().lockHistoryOfPrincipal('client:test-client'))).toBeLessThanOrEqual(
        LOCK_HISTORY_RETENTION.entriesPerPrincipal,
      );
    }
    console.log(`flood of ${FLOOD} locks × 8 resources: ${floodMs} ms`);
  }, 60_000);
});
