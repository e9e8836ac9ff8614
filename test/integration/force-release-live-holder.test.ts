import { describe, expect, it } from 'vitest';
import { tokenOf, type Lock } from '@redlock-console/redlock';
import type { ForceReleaseResponse } from '../../lib/api/locks';
import { apiWithPackageClient } from '../support/api-with-client';

/**
 * Force-release says whether the holder is alive — read from the holder's keys alone
 * (metadata `extensions`, `acquiredAt`, `ttlMs` and the TTL an extend resets), so for any client of
 * the package, not only the console's core — and the API refuses to release a live holder without
 * the operator's `confirmLiveHolder` (one lock) / `confirmLiveHolders` (a batch), before anything
 * is written or deleted. The holder is a real client extending on a timer against real masters.
 */
const env = apiWithPackageClient();

/** A holder that extends every `everyMs` until stopped; resolves once it has extended `atLeast` times. */
async function liveHolder(resource: string, everyMs: number, atLeast: number) {
  const lock = await env.client.acquire(resource, 10_000, { metadata: { owner: 'live-holder-test' } });
  let running = true;
  let lostAt: number | null = null;
  const loop = (async () => {
    while (running) {
      // work: the holder extends every everyMs
      await new Promise((r) => setTimeout(r, everyMs));
      if (!running) break;
      try {
        await lock.extend(10_000);
      } catch {
        lostAt = Date.now();
        running = false;
      }
    }
  })();
  // poll: until it has extended atLeast times
  while (lock.extensions < atLeast) await new Promise((r) => setTimeout(r, 50));
  return {
    lock,
    lostAt: () => lostAt,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

async function tokensOn(resource: string): Promise<Array<string | null>> {
  return Promise.all(
    [1, 2, 3].map(async (id) => {
      const c = env.api.cluster.client(id);
      if (c.status === 'wait') await c.connect();
      const value = await c.get(`rl:lock:${resource}`);
      return value === null ? null : tokenOf(value);
    }),
  );
}

const post = (resource: string, body: unknown) =>
  env.api.call('POST', `/api/locks/${encodeURIComponent(resource)}/force-release`, { as: 'operator', body });

describe('force-release of a live holder', () => {
  it('the dry run says the holder is alive, how long ago and how often it extends', async () => {
    const holder = await liveHolder('live-dry', 300, 3);
    try {
      const res = await post('live-dry', { token: holder.lock.token, reason: 'look', dryRun: true });
      expect(res.status).toBe(200);
      const body = (await res.json()) as ForceReleaseResponse;
      expect(body.liveness?.pulse).toBe('alive');
      expect(body.liveness!.extensions).toBeGreaterThanOrEqual(3);
      // Paced at ~300 ms (a loaded machine stretches it; never below the timer).
      expect(body.liveness!.everyMs).toBeGreaterThanOrEqual(250);
      expect(body.liveness!.everyMs).toBeLessThan(3_000);
      expect(body.liveness!.sinceLastMs).toBeLessThan(3_000);
      expect(body.liveness!.learnsWithinMs).toBeLessThanOrEqual(body.liveness!.everyMs!);
    } finally {
      await holder.stop();
      await holder.lock.release();
    }
  });

  it('is refused 409 without confirmLiveHolder, nothing deleted; with it the keys go and the holder learns at its next extend', async () => {
    const holder = await liveHolder('live-real', 300, 3);
    try {
      const refused = await post('live-real', { token: holder.lock.token, reason: 'stuck, I think' });
      expect(refused.status).toBe(409);
      const error = ((await refused.json()) as { error: { code: string; message: string; details: { liveness: { pulse: string } } } })
        .error;
      expect(error.code).toBe('CONFLICT');
      expect(error.message).toMatch(/the holder is alive: it extended .* ago, every ~.*confirmLiveHolder: true/);
      expect(error.details.liveness.pulse).toBe('alive');
      expect(await tokensOn('live-real')).toEqual([holder.lock.token, holder.lock.token, holder.lock.token]);
      // Nothing was written ahead either: no audit entry for the refused attempt.
      const audit = (await (await env.api.call('GET', '/api/audit?action=lock.force-release', { as: 'viewer' })).json()) as {
        entries: Array<{ target: string }>;
      };
      expect(audit.entries.filter((e) => e.target === 'live-real')).toHaveLength(0);

      // A value that is not `true` is bad input, not a confirmation.
      const bad = await post('live-real', { token: holder.lock.token, reason: 'stuck', confirmLiveHolder: 'yes' });
      expect(bad.status).toBe(400);

      const released = Date.now();
      const ok = await post('live-real', { token: holder.lock.token, reason: 'stuck, confirmed', confirmLiveHolder: true });
      expect(ok.status, await ok.clone().text()).toBe(200);
      const body = (await ok.json()) as ForceReleaseResponse;
      expect(body.deleted).toBe(3);
      expect(body.liveness?.pulse).toBe('alive');
      expect(await tokensOn('live-real')).toEqual([null, null, null]);
      // The holder learns only at its next extend: within about one of its intervals.
      await expect.poll(() => holder.lostAt(), { timeout: 10_000 }).not.toBeNull();
      expect(holder.lostAt()! - released).toBeLessThan(5_000);
    } finally {
      await holder.stop();
    }
  });

  it('a batch with a live holder is refused whole before any delete; confirmLiveHolders releases it', async () => {
    const holder = await liveHolder('live-bulk-a', 300, 3);
    const idle: Lock = await env.client.acquire('live-bulk-b', 10_000);
    try {
      const locks = [
        { resource: 'live-bulk-b', token: idle.token },
        { resource: 'live-bulk-a', token: holder.lock.token },
      ];
      const refused = await env.api.call('POST', '/api/force-release', { as: 'operator', body: { locks, reason: 'clear the batch' } });
      expect(refused.status).toBe(409);
      expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(
        /1 of these locks has a live holder \(live-bulk-a\)/,
      );
      // Neither the live one nor the idle one (first in the batch) was touched.
      expect(await tokensOn('live-bulk-a')).toEqual(Array(3).fill(holder.lock.token));
      expect(await tokensOn('live-bulk-b')).toEqual(Array(3).fill(idle.token));
      const ok = await env.api.call('POST', '/api/force-release', {
        as: 'operator',
        body: { locks, reason: 'clear the batch', confirmLiveHolders: true },
      });
      expect(ok.status, await ok.clone().text()).toBe(200);
      expect(await tokensOn('live-bulk-a')).toEqual([null, null, null]);
      expect(await tokensOn('live-bulk-b')).toEqual([null, null, null]);
    } finally {
      await holder.stop();
    }
  });

  it('a holder that stopped extending, or never extended, needs no extra confirmation', async () => {
    const holder = await liveHolder('live-stopped', 200, 2);
    await holder.stop();
    const never = await env.client.acquire('live-never', 10_000);
    // Stopped: its last extension is well past 1.5 of its intervals (~200 ms) and half a second.
    const dry = async () =>
      ((await (await post('live-stopped', { token: holder.lock.token, reason: 'look', dryRun: true })).json()) as ForceReleaseResponse)
        .liveness?.pulse;
    await expect.poll(dry, { timeout: 8_000 }).toBe('stopped');
    const ok = await post('live-stopped', { token: holder.lock.token, reason: 'holder crashed' });
    expect(ok.status, await ok.clone().text()).toBe(200);
    expect(((await ok.json()) as ForceReleaseResponse).deleted).toBe(3);
    const neverRes = await post('live-never', { token: never.token, reason: 'holder crashed' });
    expect(neverRes.status, await neverRes.clone().text()).toBe(200);
    expect(((await neverRes.json()) as ForceReleaseResponse).liveness?.pulse).toBe('never-extended');
  });
});
