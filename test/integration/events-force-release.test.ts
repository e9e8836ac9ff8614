import { describe, expect, it } from 'vitest';
import { FORCE_RELEASE_SETTLE_MS } from '../../lib/server/events/hub';
import { apiWithPackageClient } from '../support/api-with-client';

/**
 * One force-release is one live event. The masters report its deletes (keyspace `del`)
 * and the service publishes `lock.force-released`: a screen listed both "released" and
 * "force-released" for one action. A holder's own release is still reported as a release.
 */
const env = apiWithPackageClient();

/** The live event types of `resource` seen on /api/events while `act` runs, and for `settleMs` after. */
async function eventsDuring(resource: string, act: () => Promise<void>, settleMs: number): Promise<string[]> {
  const res = await env.api.call('GET', '/api/events', { as: 'viewer' });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const reading = (async () => {
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) return;
      buffer += decoder.decode(chunk.value);
    }
  })().catch(() => undefined);
  try {
    // Connected: the hub is subscribed on every node.
    await expect.poll(() => buffer.includes('connected'), { timeout: 10_000 }).toBe(true);
    await act();
    // absence: settleMs for events that must not come after the act
    await new Promise((r) => setTimeout(r, settleMs));
  } finally {
    await reader.cancel();
    await reading;
  }
  const pattern = new RegExp(`event: (lock\\.[a-z-]+)\\ndata: \\{[^\\n]*"resource":"${resource}"`, 'g');
  return [...buffer.matchAll(pattern)].map((m) => m[1]!);
}

describe('live events of a force-release', () => {
  it('a force-release is one lock.force-released, never a lock.released beside it', async () => {
    const lock = await env.client.acquire('ev-fr', 20_000);
    const kinds = await eventsDuring(
      'ev-fr',
      async () => {
        const res = await env.api.call('POST', '/api/locks/ev-fr/force-release', {
          as: 'operator',
          body: { token: lock.token, reason: 'one event' },
        });
        expect(res.status, await res.clone().text()).toBe(200);
      },
      // Past the window in which the masters' reports of the deletes are folded into the force-release.
      FORCE_RELEASE_SETTLE_MS + 1_000,
    );
    expect(kinds).toEqual(['lock.force-released']);
  });

  it("a holder's own release is still one lock.released", async () => {
    const lock = await env.client.acquire('ev-own', 20_000);
    const kinds = await eventsDuring('ev-own', () => lock.release().then(() => undefined), 1_500);
    expect(kinds).toEqual(['lock.released']);
  });
});
