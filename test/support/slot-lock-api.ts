import { afterAll, beforeAll } from 'vitest';
import type { RwGrantView } from '../../lib/api/rwlocks';
import type { PermitView } from '../../lib/api/semaphores';
import { API_KEY, startApi, type ApiHarness, okJson as ok } from './api';

/**
 * The console's API on three masters (maxTtlMs 30 s) with one API key, `test-client`, for the
 * whole test file (registers its own beforeAll / afterAll; read `api` inside tests), and the two
 * grants the tests of semaphores' and read-write locks' slots start from, taken through the lock
 * service as that key: a permit of a semaphore of 3 (owner `etl`) and a read or write grant of a
 * read-write lock of 3 readers, each for 20 s.
 */
export interface SlotLockApi {
  readonly api: ApiHarness;
  permit(resource: string, permits?: number): Promise<PermitView>;
  rw(resource: string, mode: 'read' | 'write'): Promise<RwGrantView>;
}

export function slotLockApi(): SlotLockApi {
  let api: ApiHarness | undefined;
  beforeAll(async () => {
    api = await startApi({ nodes: 3, maxTtlMs: 30_000 });
    // Read on first use, after the harness set its own environment.
    process.env.REDLOCK_API_KEYS = `test-client=${API_KEY}`;
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
  };
}
