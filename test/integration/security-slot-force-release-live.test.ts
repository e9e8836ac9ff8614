import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { semaphoreSlotKey, tokenOf } from '@redlock-console/redlock';
import type { AuditResponse } from '../../lib/api/audit';
import type { PermitView } from '../../lib/api/semaphores';
import { slotForceReleaseResponseSchema } from '../../lib/api/slot-locks';
import { CONFIG_DEFAULTS } from '../../lib/config/env';
import { startApi, type ApiHarness, okJson as ok } from '../support/api';
import { waitFor } from '../support/cluster';

/**
 * A slot's force-release follows the mutex's rules (lib/server/force-release.ts; found missing in
 * review): a holder that is alive (extending at its pace) is released only when the operator says
 * it saw that (`confirmLiveHolder`, else 409 with nothing written: the holder would go on as if it
 * held its permit while another client takes the slot); a dry run reports each node and the
 * holder's pulse and writes nothing; and the audit log names a holder taken from the key's own
 * metadata as the key's claim, which anyone writing to the masters can forge.
 */
let api: ApiHarness;
const prefix = CONFIG_DEFAULTS.keyPrefix;
beforeAll(async () => {
  api = await startApi({ nodes: 3, maxTtlMs: 30_000 });
});
afterAll(async () => {
  await api?.stop();
});

async function keysHolding(key: string, token: string): Promise<number> {
  const values = await Promise.all(
    [1, 2, 3].map(async (id) => {
      const c = api.cluster.client(id);
      await c.connect();
      const v = await c.get(key);
      c.disconnect();
      return v;
    }),
  );
  return values.filter((v) => v !== null && tokenOf(v) === token).length;
}

/** A permit held over HTTP and extended every 300 ms until stopped, once it has extended `atLeast` times. */
async function livePermit(resource: string, atLeast: number) {
  const permit = await ok<PermitView>(
    await api.call('POST', '/api/semaphores', { as: 'client', body: { resource, limit: 2, ttlMs: 10_000, metadata: { owner: 'etl' } } }),
  );
  let running = true;
  let extensions = 0;
  const loop = (async () => {
    while (running) {
      // work: the holder extends every 300 ms, as a live client does
      await new Promise((r) => setTimeout(r, 300));
      if (!running) break;
      const res = await api.call('POST', `/api/semaphores/${resource}/extend`, {
        as: 'client',
        body: { token: permit.token, slots: permit.slots, ttlMs: 10_000 },
      });
      await res.text();
      if (res.status === 200) extensions++;
      else running = false;
    }
  })();
  await waitFor(() => extensions >= atLeast, 15_000, `${atLeast} extensions`);
  return {
    permit,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

const forceRelease = (resource: string, body: Record<string, unknown>) =>
  api.call('POST', `/api/slot-locks/semaphore/${resource}/force-release`, { as: 'operator', body: { reason: 'stuck batch job', ...body } });

describe("a slot force-release of a live holder, as the mutex's", () => {
  it('a dry run says the holder is alive and what each node would do, and writes nothing', async () => {
    const holder = await livePermit('sem-live-dry', 3);
    try {
      const slot = holder.permit.slots[0]!;
      const dry = slotForceReleaseResponseSchema.parse(
        await ok(await forceRelease('sem-live-dry', { token: holder.permit.token, slot, dryRun: true })),
      );
      expect(dry).toMatchObject({ dryRun: true, auditId: null, deleted: 0, liveness: { pulse: 'alive' } });
      expect(dry.results[0]!.nodes.map((n) => n.outcome)).toEqual(['would-delete', 'would-delete', 'would-delete']);
      expect(await keysHolding(semaphoreSlotKey(prefix, 'sem-live-dry', slot), holder.permit.token)).toBe(3);
    } finally {
      await holder.stop();
    }
  });

  it('is refused 409 without confirmLiveHolder, nothing deleted; released with it', async () => {
    const holder = await livePermit('sem-live', 3);
    try {
      const slot = holder.permit.slots[0]!;
      const key = semaphoreSlotKey(prefix, 'sem-live', slot);
      const refused = await forceRelease('sem-live', { token: holder.permit.token, slot });
      const text = await refused.text();
      expect(refused.status, text).toBe(409);
      expect(text).toContain('alive');
      expect(await keysHolding(key, holder.permit.token)).toBe(3);
      const released = await ok<{ deleted: number }>(
        await forceRelease('sem-live', { token: holder.permit.token, slot, confirmLiveHolder: true }),
      );
      expect(released.deleted).toBe(3);
      expect(await keysHolding(key, holder.permit.token)).toBe(0);
    } finally {
      await holder.stop();
    }
  });
});

describe('the holder a slot force-release writes to the audit log', () => {
  it("names a holder read from the key's own metadata as the key's claim", async () => {
    const forged = JSON.stringify({ principal: 'client:billing', owner: 'payroll', limit: '2' });
    for (const id of [1, 2, 3]) {
      const c = api.cluster.client(id);
      await c.connect();
      await c.set(`${prefix}sem:forged:0`, `tok-forged ${forged}`, 'PX', 20_000);
      c.disconnect();
    }
    await ok(await forceRelease('forged', { token: 'tok-forged', slot: 0 }));
    const audit = await ok<AuditResponse>(await api.call('GET', '/api/audit?action=lock.force-release', { as: 'operator' }));
    expect(audit.entries.find((e) => e.target === 'sem:forged:0')?.holder).toContain("(as the key's metadata says)");
  });
});
