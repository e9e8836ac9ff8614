import { afterAll, beforeAll } from 'vitest';
import { Redlock } from '@redlock-console/redlock';
import { startApi, type ApiHarness } from './api';

/**
 * The console's API on three masters (maxTtlMs 30 s) and a client of the package on the same
 * masters, for the whole test file: registers its own beforeAll / afterAll. Read `api` and `client`
 * inside tests (set once the hook ran). For what a client outside the lock service does that the
 * console must see (force-release of its locks, their history, their live events).
 */
export function apiWithPackageClient(): { api: ApiHarness; client: Redlock } {
  const env = {} as { api: ApiHarness; client: Redlock };
  beforeAll(async () => {
    env.api = await startApi({ nodes: 3, maxTtlMs: 30_000 });
    env.client = new Redlock(env.api.cluster.urls, { retryCount: 0, maxTtlMs: env.api.maxTtlMs });
  });
  afterAll(async () => {
    await env.client?.quit();
    await env.api?.stop();
  });
  return env;
}
