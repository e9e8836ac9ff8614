import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LockDetailResponse, LockListResponse } from '../../lib/api/locks';
import { Redlock } from '@redlock-console/redlock';
import { startApi, type ApiHarness } from '../support/api';

/**
 * A held lock whose voter crashed read `partial` ("a failed attempt's leftovers"). Taken
 * by a real client, held on exactly a quorum (2 of 3: node 3 without the key), then one of its
 * voters cut off too: no other client can reach a quorum around it, and it reads `held`, the down
 * node named in `unknownNodes`, on the Locks list and the lock's own page.
 */
let api: ApiHarness;
beforeAll(async () => {
  api = await startApi({ nodes: 3, maxTtlMs: 30_000 });
});
afterAll(async () => {
  await api?.stop();
});

describe('a held lock with a voter down', () => {
  it('reads held, not partial, with the down node named', async () => {
    const client = new Redlock(api.cluster.urls, { retryCount: 0, maxTtlMs: api.maxTtlMs, nodeTimeoutMs: 300 });
    try {
      const lock = await client.acquire('voter-down', 20_000);
      // Held on exactly a quorum: node 3 without the key (as if it had been down at the grant).
      const node3 = api.cluster.client(3);
      if (node3.status === 'wait') await node3.connect();
      expect(await node3.del('rl:lock:voter-down')).toBe(1);
      await api.cluster.supervisor.partition(2);
      try {
        const detail = (await (await api.call('GET', '/api/locks/voter-down', { as: 'viewer' })).json()) as LockDetailResponse;
        expect(detail.view).toMatchObject({ state: 'held', majorityToken: lock.token, holders: 1, quorum: 2, unknownNodes: [2] });
        const list = (await (await api.call('GET', '/api/locks?prefix=voter-down&fresh=1', { as: 'viewer' })).json()) as LockListResponse;
        expect(list.items.find((v) => v.resource === 'voter-down')).toMatchObject({ state: 'held', unknownNodes: [2] });
        // …and it holds: another client cannot take it.
        const other = new Redlock(api.cluster.urls, { retryCount: 0, maxTtlMs: api.maxTtlMs, nodeTimeoutMs: 300 });
        await expect(other.acquire('voter-down', 5_000)).rejects.toThrow();
        await other.quit();
      } finally {
        await api.cluster.supervisor.heal(2);
      }
    } finally {
      await client.quit();
    }
  });
});
