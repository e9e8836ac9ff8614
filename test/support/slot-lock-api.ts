import { afterAll, beforeAll } from 'vitest';
import { tokenOf } from '@redlock-console/redlock';
import type { RwGrantView } from '../../lib/api/rwlocks';
import type { PermitView } from '../../lib/api/semaphores';
import { API_KEY, startApi, type ApiHarness, okJson as ok } from './api';

/** A second API key, `quota`, for a test of the per-key quota (the other tests' grants do not count against it). */
export const QUOTA_KEY = 'quota-key-0123456789abcdef01234567';

/**
 * The console's API on three masters (maxTtlMs 30 s) with the API key `test-client` (and, given
 * `quotaHeld`, the key `quota` that may hold that many locks), for the whole test file (registers
 * its own beforeAll / afterAll; read `api` inside tests); the two grants the tests of semaphores'
 * and read-write locks' slots start from, taken through the lock service as `test-client`: a
 * permit of a semaphore of 3 (owner `etl`) and a read or write grant of a read-write lock of 3
 * readers, each for 20 s; and what each master holds at a key.
 */
export interface SlotLockApi {
  readonly api: ApiHarness;
  permit(resource: string, permits?: number): Promise<PermitView>;
  rw(resource: string, mode: 'read' | 'write'): Promise<RwGrantView>;
  /** The token each of the three masters holds at `key` (null where absent). */
  tokensAt(key: string): Promise<Array<string | null>>;
}

export function slotLockApi(options: { quotaHeld?: number } = {}): SlotLockApi {
  let api: ApiHarness | undefined;
  beforeAll(async () => {
    api = await startApi({ nodes: 3, maxTtlMs: 30_000 });
    // Read on first use, after the harness set its own environment.
    if (options.quotaHeld === undefined) process.env.REDLOCK_API_KEYS = `test-client=${API_KEY}`;
    else {
      process.env.REDLOCK_API_KEYS = `test-client=${API_KEY},quota=${QUOTA_KEY}`;
      process.env.REDLOCK_API_KEY_QUOTAS = `quota:held=${options.quotaHeld}`;
    }
  });
  afterAll(async () => {
    await api?.stop();
  });
  const started = (): ApiHarness => {
    if (!api) throw new Error('slotLockApi: the API is started in beforeAll; read it inside a test');
    return api;
  };
  return {
    get api() {
      return started();
    },
    permit: async (resource, permits = 1) =>
      ok<PermitView>(
        await started().call('POST', '/api/semaphores', {
          as: 'client',
          body: { resource, limit: 3, permits, ttlMs: 20_000, metadata: { owner: 'etl' } },
        }),
      ),
    rw: async (resource, mode) =>
      ok<RwGrantView>(
        await started().call('POST', `/api/rwlocks/${resource}/${mode}`, { as: 'client', body: { ttlMs: 20_000, maxReaders: 3 } }),
      ),
    tokensAt: (key) =>
      Promise.all(
        [1, 2, 3].map(async (id) => {
          const c = started().cluster.client(id);
          if (c.status === 'wait') await c.connect();
          const value = await c.get(key);
          return value === null ? null : tokenOf(value);
        }),
      ),
  };
}
