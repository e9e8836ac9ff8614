import { describe, expect, it } from 'vitest';
import { Redlock } from '@redlock-console/redlock';
import { uniquePrefix } from '@/test/support/cluster';
import { redlockEnv } from '@/test/support/redlock-env';

// Survivors of `npm run mutation` on release-round.ts (docs/mutation.md), killed here: a release
// whose nodes all answer 'not-held' is complete (nothing of the token is left anywhere), and a
// release's durationMs is the time it took, early answer and settled outcome alike.
const env = redlockEnv();

async function redlock(name: string): Promise<Redlock> {
  const r = new Redlock(env.cluster.urls, { keyPrefix: uniquePrefix(name), retryCount: 0, nodeTimeoutMs: 8_000 });
  env.redlocks.push(r);
  await r.markNodesClean();
  await r.connect();
  return r;
}

describe('release outcome, exactly', () => {
  it("a token no node holds: every node answers 'not-held', and the release is complete", async () => {
    const a = await redlock('release-not-held');
    const before = performance.now();
    const result = await (await a.releaseToken('nobody', 'never-granted-token')).settled;
    const took = performance.now() - before;
    expect(result.votes.map((v) => v.reason)).toEqual(['not-held', 'not-held', 'not-held', 'not-held', 'not-held']);
    expect(result.deleted).toBe(0);
    expect(result.complete).toBe(true);
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    expect(result.durationMs).toBeLessThanOrEqual(took + 1);
  });

  it('an early answer (two nodes stopped) reports the time it took, not more', async () => {
    const a = await redlock('release-early-duration');
    const lock = await a.acquire('r', 20_000);
    await env.cluster.supervisor.pause(4);
    await env.cluster.supervisor.pause(5);
    try {
      const before = performance.now();
      const early = await lock.release();
      const took = performance.now() - before;
      expect(early.complete).toBe(false);
      expect(early.durationMs).toBeGreaterThanOrEqual(0);
      expect(early.durationMs).toBeLessThanOrEqual(took + 1);
    } finally {
      await env.cluster.supervisor.resume(4);
      await env.cluster.supervisor.resume(5);
    }
  });
});
