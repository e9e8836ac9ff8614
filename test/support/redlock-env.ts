import { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import type { Redlock } from '@redlock-console/redlock';
import { startTestCluster, type TestCluster } from './cluster';

/** What a lock-core test file shares: set by the hooks redlockEnv() registers. */
export interface RedlockEnv {
  cluster: TestCluster;
  /** Clients straight to each redis-server (bypassing the fault proxies), for inspection. */
  direct: Redis[];
  /** Redlocks the file created: quit after the last test. */
  redlocks: Redlock[];
  /** Unhandled rejections seen while the file ran (a test asserts there were none). */
  unhandled: unknown[];
}

/**
 * Five masters without persistence (behind fault proxies) for the whole file, a direct client to
 * each, and a record of unhandled rejections; registers its own beforeAll / afterAll.
 */
export function redlockEnv(): RedlockEnv {
  const env = { direct: [], redlocks: [], unhandled: [] } as unknown as RedlockEnv;
  const onUnhandled = (reason: unknown) => env.unhandled.push(reason);
  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    env.cluster = await startTestCluster({ nodes: 5, persistence: 'none' });
    env.direct = env.cluster.supervisor.directUrls().map((url) => {
      const client = new Redis(url, { maxRetriesPerRequest: 1, retryStrategy: () => 50 });
      client.on('error', () => undefined);
      return client;
    });
  });
  afterAll(async () => {
    await Promise.all(env.redlocks.map((r) => r.quit()));
    for (const c of env.direct) c.disconnect();
    await env.cluster?.stop();
    process.off('unhandledRejection', onUnhandled);
  });
  return env;
}
