import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runningAcquires } from '../../lib/server/lock-service/replica-stopping';
import { startApi, type ApiHarness } from '../support/api';

/**
 * Each acquire the lock service answers waits on a signal of its own (its client leaving, or the
 * replica's drain ending: replica-stopping.ts), kept only while it runs. Nothing may stay behind
 * per acquire answered: a replica answers millions in its life (waiting on one process-wide signal
 * through Node 20's AbortSignal.any kept an entry per acquire ever answered).
 */
let api: ApiHarness;
beforeAll(async () => {
  api = await startApi({ nodes: 3, maxTtlMs: 10_000 });
});
afterAll(async () => {
  await api?.stop();
});

describe('what an acquire leaves behind in the lock service', () => {
  it('nothing, once it has ended: granted, contended after a wait, or refused', async () => {
    const held = await api.call('POST', '/api/locks', { as: 'client', body: { resource: 'wait-held', ttlMs: 5_000 } });
    expect(held.status).toBe(200);
    const answers = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const body =
          i % 4 === 0
            ? { resource: 'wait-held', ttlMs: 1_000, waitMs: 50 } // contended after a wait
            : i % 4 === 1
              ? { resource: 'wait-held', ttlMs: 999_999 } // refused: over the ceiling
              : { resource: `wait-free-${i}`, ttlMs: 1_000 }; // granted
        const res = await api.call('POST', '/api/locks', { as: 'client', body });
        await res.text();
        return res.status;
      }),
    );
    expect(new Set(answers)).toEqual(new Set([200, 400, 409]));
    expect(runningAcquires()).toBe(0);
  });
});
