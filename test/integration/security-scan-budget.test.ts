import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LockListResponse } from '../../lib/api/locks';
import { PATTERN_SCAN_MAX_KEYS, SCANS_PER_WINDOW } from '../../lib/server/scan-budget';
import { startApi, type ApiHarness } from '../support/api';

/**
 * Four `GET /api/locks?pattern=*&fresh=1` from a viewer over 100,000 other
 * keys per master took 27.5 s of scans, the lock service's p95 from 52 ms to 3.3 s and the
 * console to 1.08 GB. Now (lib/server/scan-budget.ts): a fresh read joins a scan already running,
 * each caller starts at most SCANS_PER_WINDOW full scans a minute (429 + Retry-After past it), and
 * a pattern scan keeps at most PATTERN_SCAN_MAX_KEYS keys per master.
 */

let api: ApiHarness;
let node1: Redis;
beforeAll(async () => {
  api = await startApi({ nodes: 3 });
  node1 = api.cluster.client(1);
  await node1.connect();
  // More foreign keys on node 1 than one pattern scan may keep (plus a few everywhere).
  for (let from = 0; from < PATTERN_SCAN_MAX_KEYS + 5_000; from += 5_000) {
    const args: string[] = [];
    for (let i = from; i < from + 5_000; i++) args.push(`big:${i}`, 'x');
    await node1.mset(...args);
  }
  for (const id of [1, 2, 3]) {
    const c = id === 1 ? node1 : api.cluster.client(id);
    if (id !== 1) await c.connect();
    await c.set('few:a', 'v', 'PX', 120_000);
  }
}, 60_000);
afterAll(async () => {
  await api?.stop();
});

/** SCAN commands run by node 1 so far (the scan script's SCANs are counted as commands). */
async function scans(): Promise<number> {
  const info = await node1.info('commandstats');
  return Number(/cmdstat_scan:calls=(\d+)/.exec(info)?.[1] ?? 0);
}

const get = (as: 'viewer' | 'operator', query: string) => api.call('GET', `/api/locks?${query}`, { as });

describe('full scans of a pattern', () => {
  it('concurrent fresh reads of one pattern share one scan', async () => {
    // Warm: the scan script loaded, and the viewer signed in (the harness signs in on first use,
    // and sign-ins are checked one at a time: they would stagger the concurrent requests).
    await get('operator', 'pattern=few:*');
    await get('viewer', 'pattern=few:*');
    const before = await scans();
    const answers = await Promise.all([1, 2, 3, 4].map(() => get('viewer', 'fresh=1&pattern=few:*')));
    for (const res of answers) expect(res.status, await res.clone().text()).toBe(200);
    const during = (await scans()) - before;
    const alone = await scans();
    expect((await get('operator', 'fresh=1&pattern=few:*')).status).toBe(200);
    // Four concurrent requests ran as many SCANs as one request alone.
    expect(during).toBe((await scans()) - alone);
  });

  it('a pattern scan stops at its bound of keys per master and says so', async () => {
    const res = await get('operator', 'fresh=1&pattern=big:*');
    const body = (await res.json()) as LockListResponse;
    expect(res.status).toBe(200);
    const n1 = body.nodes.find((n) => n.node === 1)!;
    expect(n1.truncated).toBe(true);
    expect(n1.keys).toBeLessThan(PATTERN_SCAN_MAX_KEYS + 5_000);
    expect(body.nodes.find((n) => n.node === 2)!.truncated).toBe(false);
  });

  it("one caller's fresh scans are limited per minute (429 + Retry-After); another's are not", async () => {
    // The viewer spent at most two scans above (the four concurrent reads shared one).
    let refused: Response | null = null;
    for (let i = 0; i < SCANS_PER_WINDOW + 1 && !refused; i++) {
      const res = await get('viewer', 'fresh=1&pattern=few:*');
      if (res.status === 429) refused = res;
      else expect(res.status, await res.text()).toBe(200);
    }
    expect(refused, 'a viewer was never refused').not.toBeNull();
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThan(0);
    const body = (await refused!.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('TOO_MANY_REQUESTS');
    expect(body.error.message).toMatch(/full scans/);
    // A read without fresh shares the latest snapshot: still answered.
    expect((await get('viewer', 'pattern=few:*')).status).toBe(200);
    // The operator's budget is its own.
    expect((await get('operator', 'fresh=1&pattern=few:*')).status).toBe(200);
  });
});
