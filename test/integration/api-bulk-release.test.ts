import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditResponse } from '../../lib/api/audit';
import { BULK_RELEASE_MAX, bulkForceReleaseResponseSchema, type LockGrant } from '../../lib/api/locks';
import { lockKey, lockValue, tokenOf } from '@redlock-console/redlock';
import { startApi, type ApiHarness } from '../support/api';

/**
 * POST /api/force-release on a real cluster: several locks (a split lock's every token among them)
 * released with one reason, each item the compare-and-delete of the token the operator saw.
 */
let api: ApiHarness;
beforeAll(async () => {
  api = await startApi({ nodes: 5, maxTtlMs: 30_000 });
});
afterAll(async () => {
  await api?.stop();
});

const token = () => randomBytes(20).toString('base64url');

async function node(id: number) {
  const c = api.cluster.client(id);
  if (c.status === 'wait') await c.connect();
  return c;
}

/** Write `token` as the lock key of `resource` on the given nodes, as a holder would have. */
async function seed(resource: string, tokenValue: string, nodes: number[]): Promise<void> {
  for (const id of nodes)
    await (await node(id)).set(lockKey('rl:', resource), lockValue(tokenValue, '{"owner":"stuck-worker"}'), 'PX', 20_000);
}

async function tokensOn(resource: string): Promise<Array<string | null>> {
  return Promise.all(
    [1, 2, 3, 4, 5].map(async (id) => ((v) => (v === null ? null : tokenOf(v)))(await (await node(id)).get(lockKey('rl:', resource)))),
  );
}

async function grant(resource: string): Promise<LockGrant> {
  const res = await api.call('POST', '/api/locks', { as: 'client', body: { resource, ttlMs: 20_000 } });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as LockGrant;
}

describe('bulk force-release', () => {
  it('a dry run previews every lock and changes nothing', async () => {
    const [a, b] = [token(), token()];
    await seed('bulk-dry-split', a, [1, 2]);
    await seed('bulk-dry-split', b, [3, 4]);
    const res = await api.call('POST', '/api/force-release', {
      as: 'operator',
      body: {
        locks: [
          { resource: 'bulk-dry-split', token: a },
          { resource: 'bulk-dry-split', token: b },
        ],
        reason: 'preview',
        dryRun: true,
      },
    });
    expect(res.status).toBe(200);
    const body = bulkForceReleaseResponseSchema.parse(await res.json());
    expect(body).toMatchObject({ dryRun: true, batchId: null, deleted: 0 });
    expect(body.results.map((r) => r.nodes.map((n) => n.outcome))).toEqual([
      ['would-delete', 'would-delete', 'other-holder', 'other-holder', 'absent'],
      ['other-holder', 'other-holder', 'would-delete', 'would-delete', 'absent'],
    ]);
    expect(await tokensOn('bulk-dry-split')).toEqual([a, a, b, b, null]);
  });

  it("clears a split lock's every token and a held lock, leaves a lock that changed hands to its new holder, and audits each as one batch", async () => {
    const [a, b] = [token(), token()];
    await seed('bulk-split', a, [1, 2]);
    await seed('bulk-split', b, [3, 4]);
    const held = await grant('bulk-held');
    // The operator saw `stale` on bulk-moved; by the click a client holds it with its own token.
    const stale = token();
    const moved = await grant('bulk-moved');

    const res = await api.call('POST', '/api/force-release', {
      as: 'operator',
      body: {
        locks: [
          { resource: 'bulk-split', token: a },
          { resource: 'bulk-split', token: b },
          { resource: 'bulk-held', token: held.token },
          { resource: 'bulk-moved', token: stale },
        ],
        reason: 'incident 77: workers gone',
      },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = bulkForceReleaseResponseSchema.parse(await res.json());
    expect(body.dryRun).toBe(false);
    expect(body.deleted).toBe(2 + 2 + 5);
    expect(body.results.map((r) => [r.resource, r.deleted])).toEqual([
      ['bulk-split', 2],
      ['bulk-split', 2],
      ['bulk-held', 5],
      ['bulk-moved', 0],
    ]);
    expect(await tokensOn('bulk-split')).toEqual([null, null, null, null, null]);
    expect(await tokensOn('bulk-held')).toEqual([null, null, null, null, null]);
    expect(await tokensOn('bulk-moved')).toEqual(Array(5).fill(moved.token));

    const audit = (await (
      await api.call('GET', '/api/audit?action=lock.force-release&limit=50', { as: 'viewer' })
    ).json()) as AuditResponse;
    const entries = body.results.map((r) => audit.entries.find((e) => e.id === r.auditId)!);
    expect(entries.map((e) => e.target)).toEqual(['bulk-split', 'bulk-split', 'bulk-held', 'bulk-moved']);
    entries.forEach((e, i) => {
      expect(e.reason).toBe('incident 77: workers gone');
      expect(e.detail).toContain(`bulk ${body.batchId}, ${i + 1} of 4`);
    });
    expect(entries[3]!.outcome).toBe('nothing-deleted');
  });

  it('refuses bad input with 400 and a message, and a viewer with 403', async () => {
    const post = (body: unknown, as: 'operator' | 'viewer' = 'operator') => api.call('POST', '/api/force-release', { as, body });
    const one = { resource: 'bulk-x', token: 'abc' };
    for (const [body, message] of [
      [{ locks: [], reason: 'why not' }, 'at least one lock'],
      [{ locks: [one, one], reason: 'why not' }, 'named twice'],
      [
        { locks: Array.from({ length: BULK_RELEASE_MAX + 1 }, (_, i) => ({ resource: `bulk-${i}`, token: 't' })), reason: 'why not' },
        `at most ${BULK_RELEASE_MAX}`,
      ],
      [{ locks: [one], reason: 'x' }, 'say why'],
      // The core would refuse it half-way through a batch: refused before anything is deleted.
      [{ locks: [one, { resource: 'bulk-y', token: 'a b' }], reason: 'why not' }, 'never holds a space'],
      [{ locks: [one], reason: 'why not', extra: 1 }, ''],
    ] as const) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(((await res.json()) as { error: { message: string } }).error.message).toContain(message);
    }
    expect((await post({ locks: [one], reason: 'why not' }, 'viewer')).status).toBe(403);
  });
});
