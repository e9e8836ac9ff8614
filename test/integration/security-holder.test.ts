import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditResponse } from '../../lib/api/audit';
import type { LockDetailResponse, LockGrant } from '../../lib/api/locks';
import { startApi, type ApiHarness } from '../support/api';

/**
 * Issue 18, low finding: a client key could write metadata `owner: "operator"` and the lock detail
 * showed it as the holder. The holder's claims stay (they are useful), but who authenticated is
 * recorded apart, by the console, where no client can write it; a force-release's audit entry names
 * the holder it hit.
 */

let api: ApiHarness;
beforeAll(async () => {
  api = await startApi({ nodes: 3 });
});
afterAll(async () => {
  await api?.stop();
});

describe('who holds a lock', () => {
  it('a client key cannot pass itself off as the operator: the authenticated principal is recorded apart', async () => {
    const res = await api.call('POST', '/api/locks', {
      as: 'client',
      body: { resource: 'holder-claims', ttlMs: 2_500, metadata: { owner: 'operator', principal: 'operator:op' } },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const detail = (await (await api.call('GET', '/api/locks/holder-claims', { as: 'viewer' })).json()) as LockDetailResponse;
    expect(detail.view?.meta).toMatchObject({ owner: 'operator', principal: 'client:test-client' });
  });

  it('the audit entry of a force-release names the holder it hit', async () => {
    const grant = (await (
      await api.call('POST', '/api/locks', {
        as: 'client',
        body: { resource: 'holder-hit', ttlMs: 2_500, metadata: { owner: 'billing-7', host: 'web-3' } },
      })
    ).json()) as LockGrant;
    const res = await api.call('POST', '/api/locks/holder-hit/force-release', {
      as: 'operator',
      body: { token: grant.token, reason: 'stuck in an incident' },
    });
    expect(res.status).toBe(200);
    const { entries } = (await (await api.call('GET', '/api/audit?action=lock.force-release', { as: 'viewer' })).json()) as AuditResponse;
    const entry = entries.find((e) => e.target === 'holder-hit')!;
    expect(entry.detail).toContain('holder: principal=client:test-client owner=billing-7 host=web-3');
  });
});
