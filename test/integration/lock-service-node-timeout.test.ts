import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type ApiHarness } from '../support/api';

/**
 * REDLOCK_NODE_TIMEOUT_MS reaches the lock service's core: with two of three masters cut off (no
 * quorum possible), an acquire waits for their answers that long before it answers 503, not the
 * core's default 100 ms.
 */
const NODE_TIMEOUT_MS = 1_500;
let api: ApiHarness;
beforeAll(async () => {
  api = await startApi({ nodes: 3, nodeTimeoutMs: NODE_TIMEOUT_MS });
});
afterAll(async () => {
  await api?.stop();
});

describe("the lock service's node timeout", () => {
  it('is the configured one: a round waits for cut-off masters that long, then answers QUORUM_UNAVAILABLE', async () => {
    // Warm: the first request connects and checks the masters.
    const warm = await api.call('POST', '/api/locks', { as: 'client', body: { resource: 'nt-warm', ttlMs: 3_000 } });
    expect(warm.status, await warm.clone().text()).toBe(200);
    await api.cluster.supervisor.partition(2);
    await api.cluster.supervisor.partition(3);
    try {
      const started = performance.now();
      const res = await api.call('POST', '/api/locks', { as: 'client', body: { resource: 'nt-cut', ttlMs: 3_000 } });
      const waited = performance.now() - started;
      expect(res.status).toBe(503);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('QUORUM_UNAVAILABLE');
      expect(waited).toBeGreaterThanOrEqual(NODE_TIMEOUT_MS - 50);
    } finally {
      await api.cluster.supervisor.heal(2);
      await api.cluster.supervisor.heal(3);
    }
  });
});
