import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyUsageResponseSchema } from '../../lib/api/api-keys';
import { withoutReplica } from '../support/metrics-text';
import { API_KEY, METRICS_TOKEN, startApi, type ApiHarness } from '../support/api';

/**
 * One API key took 7,808 locks in 20 s (+80 MB a master, +200 MB console); nothing
 * bounded a key's locks held, acquires a second or acquires waiting. Now each key has quotas
 * (REDLOCK_API_KEY_QUOTAS, lib/server/quotas): past one, 429 + Retry-After + details.quota, no
 * master asked, and another key is not affected.
 */
const OTHER = 'other-key-0123456789abcdef0123456';
const RATER = 'rater-key-0123456789abcdef0123456';
const WAITER = 'waiter-key-0123456789abcdef012345';

let api: ApiHarness;
beforeAll(async () => {
  api = await startApi({ nodes: 3, maxTtlMs: 3_000 });
  // Read on first use, after the harness set its own environment.
  process.env.REDLOCK_API_KEYS = `test-client=${API_KEY},other=${OTHER},rater=${RATER},waiter=${WAITER}`;
  process.env.REDLOCK_API_KEY_QUOTAS = 'test-client:held=3;rater:rate=2,burst=2;waiter:waiting=1';
});
afterAll(async () => {
  await api?.stop();
});

type Grant = { token: string; expiresAt: number };
type Refusal = { error: { code: string; message: string; details: { quota: string; limit: number } } };

function acquire(key: string, body: Record<string, unknown>) {
  return api.call('POST', '/api/locks', { headers: { authorization: `Bearer ${key}` }, body: { ttlMs: 2_000, ...body } });
}

async function refused(res: Response, quota: string): Promise<Refusal> {
  const text = await res.text();
  expect(res.status, text).toBe(429);
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  const body = JSON.parse(text) as Refusal;
  expect(body.error.code).toBe('TOO_MANY_REQUESTS');
  expect(body.error.details.quota).toBe(quota);
  return body;
}

async function granted(res: Response): Promise<Grant> {
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return JSON.parse(text) as Grant;
}

describe('API-key quotas', () => {
  it('locks held: the fourth is refused, another key is not; a release and a lease end give the room back', async () => {
    const held: Grant[] = [];
    for (const r of ['q-1', 'q-2', 'q-3']) held.push(await granted(await acquire(API_KEY, { resource: r })));
    const body = await refused(await acquire(API_KEY, { resource: 'q-4' }), 'locks-held');
    expect(body.error.message).toMatch(/quota of 3 locks held/);
    // Nothing was taken on the masters for the refused one: another key gets q-4 at once.
    const other = await granted(await acquire(OTHER, { resource: 'q-4' }));
    await api.call('POST', '/api/locks/q-4/release', { headers: { authorization: `Bearer ${OTHER}` }, body: { token: other.token } });
    // A release gives its room back at once.
    const release = await api.call('POST', '/api/locks/q-1/release', { as: 'client', body: { token: held[0]!.token } });
    expect(release.status).toBe(200);
    held[0] = await granted(await acquire(API_KEY, { resource: 'q-4' }));
    await refused(await acquire(API_KEY, { resource: 'q-5' }), 'locks-held');
    // A client that never releases: the room comes back when the leases end.
    const lastEnd = Math.max(...held.map((g) => g.expiresAt));
    await expect
      .poll(async () => (await acquire(API_KEY, { resource: 'q-6', ttlMs: 500 })).status, {
        timeout: lastEnd - Date.now() + 5_000,
        interval: 200,
      })
      .toBe(200);
    expect(Date.now()).toBeGreaterThanOrEqual(Math.min(...held.map((g) => g.expiresAt)));
  });

  it('acquires a second: past the bucket, 429', async () => {
    await granted(await acquire(RATER, { resource: 'r-1', ttlMs: 500 }));
    await granted(await acquire(RATER, { resource: 'r-2', ttlMs: 500 }));
    const body = await refused(await acquire(RATER, { resource: 'r-3', ttlMs: 500 }), 'acquire-rate');
    expect(body.error.details.limit).toBe(2);
  });

  it('acquires waiting: the second waiting acquire is refused while the first waits', async () => {
    const holder = await granted(await acquire(OTHER, { resource: 'w-1', ttlMs: 3_000 }));
    const waiting = acquire(WAITER, { resource: 'w-1', ttlMs: 1_000, waitMs: 10_000 });
    // The first waiter is admitted once the server has read it; poll until the second is refused.
    await expect
      .poll(async () => {
        const res = await acquire(WAITER, { resource: 'w-2', ttlMs: 1_000, waitMs: 50 });
        return res.status === 429 ? ((await res.json()) as Refusal).error.details.quota : res.status;
      })
      .toBe('waiting');
    await api.call('POST', '/api/locks/w-1/release', { headers: { authorization: `Bearer ${OTHER}` }, body: { token: holder.token } });
    const first = await granted(await waiting);
    expect(first.token).toBeTruthy();
    // Its wait over, the waiting quota is free again.
    await granted(await acquire(WAITER, { resource: 'w-3', ttlMs: 1_000, waitMs: 100 }));
  });

  it('the refusals and the use are in the metrics', async () => {
    const res = await api.call('GET', '/api/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    const text = withoutReplica(await res.text());
    expect(text).toMatch(/redlock_api_key_quota_refusals_total\{key="test-client",quota="locks-held"\} [1-9]\d*/);
    expect(text).toMatch(/redlock_api_key_quota_refusals_total\{key="rater",quota="acquire-rate"\} 1/);
    expect(text).toMatch(/redlock_api_key_quota_refusals_total\{key="waiter",quota="waiting"\} [1-9]/);
    expect(text).toMatch(/redlock_api_key_quota_refusals_total\{key="other",quota="locks-held"\} 0/);
    expect(text).toMatch(/redlock_api_key_locks_held\{key="test-client"\} \d/);
  });

  it("GET /api/api-keys shows each configured key's use against its quotas, to a viewer too", async () => {
    const grant = await granted(await acquire(OTHER, { resource: 'u-1', ttlMs: 3_000 }));
    const res = await api.call('GET', '/api/api-keys', { as: 'viewer' });
    expect(res.status).toBe(200);
    const body = apiKeyUsageResponseSchema.parse(await res.json());
    // Every console on these masters (this one alone here), read from the masters just now.
    expect(body.scope).toBe('shared');
    expect(body.keys.map((k) => k.name)).toEqual(['other', 'rater', 'test-client', 'waiter']);
    const other = body.keys.find((k) => k.name === 'other')!;
    expect(other.held).toBeGreaterThanOrEqual(1);
    expect(other.quota).toEqual({ held: 1_000, rate: 2_000, burst: 4_000, waiting: 200 });
    const rater = body.keys.find((k) => k.name === 'rater')!;
    expect(rater.quota).toMatchObject({ rate: 2, burst: 2 });
    expect(rater.refused['acquire-rate']).toBe(1);
    await api.call('POST', '/api/locks/u-1/release', { headers: { authorization: `Bearer ${OTHER}` }, body: { token: grant.token } });
    const after = apiKeyUsageResponseSchema.parse(await (await api.call('GET', '/api/api-keys', { as: 'viewer' })).json());
    expect(after.keys.find((k) => k.name === 'other')!.held).toBe(other.held - 1);
  });
});
