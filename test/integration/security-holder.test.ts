import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockKey } from '@redlock-console/redlock';
import { UNKNOWN_HOLDER, type AuditEntry, type AuditResponse } from '../../lib/api/audit';
import type { LockDetailResponse, LockGrant } from '../../lib/api/locks';
import { startApi, type ApiHarness } from '../support/api';

/**
 * A client key could write metadata `owner: "operator"` and the lock detail
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
    expect(entry.holder).toMatch(/^principal=client:test-client owner=billing-7 host=web-3( |$)/);
  });

  it("a client's metadata cannot make the holder text name another principal: a value that is not a plain token is quoted", async () => {
    const grant = (await (
      await api.call('POST', '/api/locks', {
        as: 'client',
        body: { resource: 'holder-inject', ttlMs: 2_500, metadata: { owner: 'x principal=client:billing', host: 'web "3"\nprincipal=x' } },
      })
    ).json()) as LockGrant;
    const res = await api.call('POST', '/api/locks/holder-inject/force-release', {
      as: 'operator',
      body: { token: grant.token, reason: 'stuck in an incident' },
    });
    expect(res.status).toBe(200);
    const { entries } = (await (await api.call('GET', '/api/audit?action=lock.force-release', { as: 'viewer' })).json()) as AuditResponse;
    const holder = entries.find((e) => e.target === 'holder-inject')!.holder!;
    expect(holder.startsWith('principal=client:test-client owner="x principal=client:billing" host="web \\"3\\"\\nprincipal=x" ')).toBe(
      true,
    );
    // Read as fields (bare tokens, or JSON strings), it names one principal: the authenticated one.
    const fields = [...holder.matchAll(/(\w+)=("(?:[^"\\]|\\.)*"|\S+)/g)].map((m) => [m[1], m[2]]);
    expect(fields.filter(([k]) => k === 'principal')).toEqual([['principal', 'client:test-client']]);
  });

  /** Keys written as bare tokens (no metadata), as another Redlock library or an old client writes them. */
  async function bareLock(resource: string, token: string): Promise<void> {
    const { getRuntime } = await import('../../lib/server/runtime');
    const key = lockKey(getRuntime().keyPrefix, resource);
    for (let id = 1; id <= 3; id++) {
      const node = api.cluster.client(id);
      try {
        await node.connect();
        await node.set(key, token, 'PX', 10_000);
      } finally {
        node.disconnect();
      }
    }
  }

  async function forceReleased(resource: string, token: string): Promise<AuditEntry> {
    const res = await api.call('POST', `/api/locks/${resource}/force-release`, { as: 'operator', body: { token, reason: 'incident 42' } });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(((await res.json()) as { deleted: number }).deleted).toBe(3);
    const { entries } = (await (await api.call('GET', '/api/audit?action=lock.force-release', { as: 'viewer' })).json()) as AuditResponse;
    return entries.find((e) => e.target === resource)!;
  }

  it('a lock without metadata is named from its grant in the lock history, read before the release', async () => {
    const { recordLockHistory, tokenFingerprint, flushLockHistory } = await import('../../lib/server/lock-history');
    const token = 'bare-token-with-a-grant';
    recordLockHistory({
      event: 'granted',
      resources: ['holder-history'],
      token: tokenFingerprint(token),
      fence: null,
      principal: 'client:ghost',
      metadata: { owner: 'nightly-job', host: 'batch-2' },
      ttlMs: 10_000,
      expiresAt: Date.now() + 10_000,
      detail: '',
    });
    await flushLockHistory();
    await bareLock('holder-history', token);
    expect((await forceReleased('holder-history', token)).holder).toBe('principal=client:ghost owner=nightly-job host=batch-2');
  });

  it('a lock nobody can name is recorded as such, never left blank', async () => {
    await bareLock('holder-none', 'bare-token-no-history');
    const entry = await forceReleased('holder-none', 'bare-token-no-history');
    expect(entry.holder).toBe(UNKNOWN_HOLDER);
    expect(entry.detail).not.toContain('holder');
  });
});
