import { afterAll, beforeAll } from 'vitest';
import { Redlock } from '@redlock-console/redlock';
import { startApi, type ApiHarness } from './api';

/**
 * The console's API on three masters (maxTtlMs 30 s) and a client of the package on the same
 * masters, for the whole test file: registers its own beforeAll / afterAll. Read `api` and `client`
 * inside tests (set once the hook ran). For what a client outside the lock service does that the
 * console must see (force-release of its locks, their history, their live events).
 *
 * Neither the console's lock service nor the client is tested for its node timeout here: both wait
 * 1 s for a master (not the 100 ms default), so that a busy machine's stall is not read as a node
 * that did not answer (a clean-clone run at load 10–13 failed two files here on "0 for, 3 timeout").
 */
const NODE_TIMEOUT_MS = 1_000;

export function apiWithPackageClient(): { api: ApiHarness; client: Redlock } {
  const env = {} as { api: ApiHarness; client: Redlock };
  beforeAll(async () => {
    env.api = await startApi({ nodes: 3, maxTtlMs: 30_000, nodeTimeoutMs: NODE_TIMEOUT_MS });
    env.client = new Redlock(env.api.cluster.urls, { retryCount: 0, maxTtlMs: env.api.maxTtlMs, nodeTimeoutMs: NODE_TIMEOUT_MS });
  });
  afterAll(async () => {
    await env.client?.quit();
    await env.api?.stop();
  });
  return env;
}
