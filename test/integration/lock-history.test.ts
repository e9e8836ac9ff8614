import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { lockHistoryResponseSchema, lockServiceLogResponseSchema, type LockHistoryResponse } from '../../lib/api/lock-history';
import { lockGrantSchema } from '../../lib/api/locks';
import { startApi, type ApiHarness } from '../support/api';
import { restartConsole } from '../support/console-process';

/**
 * The lock history. Every grant, extend, release and force-release through the
 * console is recorded on a majority of the masters with the authenticated principal (the API key's name, not
 * what the client's metadata claims), read back per resource, with each hold's end derived.
 */
let api: ApiHarness;

beforeAll(async () => {
  api = await startApi({ nodes: 3, maxTtlMs: 10_000 });
});
afterAll(async () => {
  await api?.stop();
});

/** Write what the lock service buffered (the history is written in batches), then read the resource's history as a viewer. */
async function history(resource: string): Promise<LockHistoryResponse> {
  const { flushLockHistory } = await import('../../lib/server/lock-history');
  await flushLockHistory();
  const res = await api.call('GET', `/api/locks/${encodeURIComponent(resource)}/history`, { as: 'viewer' });
  expect(res.status).toBe(200);
  return lockHistoryResponseSchema.parse(await res.json());
}

async function grant(resource: string, ttlMs: number, metadata?: Record<string, string>) {
  const res = await api.call('POST', '/api/locks', { as: 'client', body: { resource, ttlMs, ...(metadata ? { metadata } : {}) } });
  expect(res.status, await res.clone().text()).toBe(200);
  return lockGrantSchema.parse(await res.json());
}

describe('the lock history', () => {
  it("names the API key that took the lock (not the metadata's claim), its extends and its release; tokens only as fingerprints", async () => {
    const lock = await grant('history-a', 5_000, { owner: 'operator', job: 'invoice-run' });
    expect(
      (await api.call('POST', '/api/locks/history-a/extend', { as: 'client', body: { token: lock.token, ttlMs: 5_000 } })).status,
    ).toBe(200);
    expect((await api.call('POST', '/api/locks/history-a/release', { as: 'client', body: { token: lock.token } })).status).toBe(200);
    // A release of a token nobody holds changes nothing and records nothing.
    await api.call('POST', '/api/locks/history-a/release', { as: 'client', body: { token: lock.token } });
    const h = await history('history-a');
    expect(h.nodesRead).toBe(3);
    expect(h.holds).toHaveLength(1);
    const [hold] = h.holds;
    expect(hold).toMatchObject({ principal: 'client:test-client', ended: 'released', extensions: 1, fence: lock.fence });
    expect(hold!.metadata).toEqual({ owner: 'operator', job: 'invoice-run' });
    expect(h.entries.map((e) => e.event)).toEqual(['released', 'extended', 'granted']);
    expect(JSON.stringify(h)).not.toContain(lock.token);
    expect(hold!.grantSeen).toBe(true);
  });

  it('a lock over several resources is one hold under each of them', async () => {
    const res = await api.call('POST', '/api/locks', { as: 'client', body: { resources: ['history-m1', 'history-m2'], ttlMs: 5_000 } });
    const lock = lockGrantSchema.parse(await res.json());
    await api.call('POST', '/api/locks/history-m1/release', {
      as: 'client',
      body: { token: lock.token, resources: ['history-m1', 'history-m2'] },
    });
    for (const resource of ['history-m1', 'history-m2']) {
      const [hold] = (await history(resource)).holds;
      expect(hold, resource).toMatchObject({ principal: 'client:test-client', ended: 'released', fence: lock.fence });
    }
  });

  it("a hold whose grant the history does not have is nobody's: a force-release of a lock taken with the core directly names no holder", async () => {
    const { Redlock } = await import('@redlock-console/redlock');
    const direct = new Redlock(api.cluster.urls, { keyPrefix: 'rl:', maxTtlMs: 10_000 });
    try {
      const lock = await direct.acquire('history-direct', 8_000);
      const res = await api.call('POST', '/api/locks/history-direct/force-release', {
        as: 'operator',
        body: { token: lock.token, reason: 'stuck' },
      });
      expect(res.status).toBe(200);
      const [hold] = (await history('history-direct')).holds;
      expect(hold).toMatchObject({ grantSeen: false, principal: null, ended: 'force-released' });
    } finally {
      await direct.quit();
    }
  });

  it("a release after the lease ran out ended nothing: the hold expired, at its lease's end", async () => {
    const lock = await grant('history-late', 300);
    // pace: past the lease (300 ms): the release must come after it ran out
    await new Promise((resolve) => setTimeout(resolve, 600));
    // The keys are gone by now (their TTL), so this release deletes nothing and is not recorded;
    // what is checked: the hold reads as expired at the end of its lease, not at the release.
    await api.call('POST', '/api/locks/history-late/release', { as: 'client', body: { token: lock.token } });
    const [hold] = (await history('history-late')).holds;
    expect(hold!.ended).toBe('expired');
    expect(hold!.endedAt).toBe(lock.expiresAt);
  });

  it('metadata and resource lists are stored cut to their bounds (these are the lock masters)', async () => {
    const metadata = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`field${i}`, 'x'.repeat(150)]));
    const lock = await grant('history-big', 2_000, metadata);
    await api.call('POST', '/api/locks/history-big/release', { as: 'client', body: { token: lock.token } });
    const [hold] = (await history('history-big')).holds;
    expect(JSON.stringify(hold!.metadata).length).toBeLessThan(700);
    expect(hold!.metadata['…']).toMatch(/cut/);
  });

  it('a lock nobody released is "expired" once its last lease ran out; "held" before', async () => {
    await grant('history-b', 1_500);
    expect((await history('history-b')).holds[0]).toMatchObject({ ended: 'held', endedAt: null });
    const grantedBy = Date.now();
    await vi.waitFor(async () => expect((await history('history-b')).holds[0]!.ended).toBe('expired'), { timeout: 10_000, interval: 100 });
    expect(Date.now() - grantedBy).toBeGreaterThanOrEqual(1_400); // not before its lease ran out
    const [hold] = (await history('history-b')).holds;
    expect(hold!.endedAt).toBeGreaterThan(hold!.grantedAt);
  });

  it('a force-release is recorded with the operator who made it and the reason', async () => {
    const lock = await grant('history-c', 8_000);
    const res = await api.call('POST', '/api/locks/history-c/force-release', {
      as: 'operator',
      body: { token: lock.token, reason: 'stuck invoice job' },
    });
    expect(res.status).toBe(200);
    const h = await history('history-c');
    expect(h.holds[0]).toMatchObject({ principal: 'client:test-client', ended: 'force-released' });
    expect(h.entries[0]).toMatchObject({ event: 'force-released', principal: 'operator:op' });
    expect(h.entries[0]!.detail).toContain('stuck invoice job');
  });

  it('survives a console restart and the loss of a minority of masters; a master down while written misses nothing the others keep', async () => {
    await api.cluster.supervisor.crash(1);
    try {
      // Written while node 1 is down: it misses these entries; the two others have them.
      const lock = await grant('history-d', 5_000);
      await api.call('POST', '/api/locks/history-d/release', { as: 'client', body: { token: lock.token } });
      await history('history-d'); // flushed
      await restartConsole();
      const h = await history('history-d');
      expect(h.nodesFailed).toBe(1);
      expect(h.holds).toHaveLength(1);
      expect(h.holds[0]).toMatchObject({ principal: 'client:test-client', ended: 'released' });
    } finally {
      await api.cluster.supervisor.act(1, { action: 'start' });
    }
    // Node 1 is back without those entries: the merge by id still shows the hold once.
    const again = await history('history-d');
    expect(again.nodesRead).toBe(3);
    expect(again.holds).toHaveLength(1);
  });

  it('each batch is written to a majority of the masters, rotating, and any one master lost still shows every hold', async () => {
    const { flushLockHistory, historyCopies } = await import('../../lib/server/lock-history');
    const { consoleKeys } = await import('../../lib/server/console-keys');
    await flushLockHistory();
    const resources = ['history-q1', 'history-q2', 'history-q3', 'history-q4'];
    for (const resource of resources) {
      const lock = await grant(resource, 5_000);
      await api.call('POST', `/api/locks/${resource}/release`, { as: 'client', body: { token: lock.token } });
      await flushLockHistory(); // one batch per resource
    }
    // Where each resource's entries are: on exactly a majority of the three masters, not on all.
    const holders = new Map<string, number[]>();
    for (const id of [1, 2, 3]) {
      const c = api.cluster.client(id);
      if (c.status === 'wait') await c.connect();
      {
        for (const resource of resources) {
          const entries = await c.xlen(consoleKeys().lockHistoryOf('client:test-client', resource));
          if (entries > 0) holders.set(resource, [...(holders.get(resource) ?? []), id]);
          if (entries > 0) expect(entries, `${resource} on node ${id}`).toBe(2); // its grant and its release
        }
      }
    }
    expect(historyCopies(3)).toBe(2);
    for (const resource of resources) expect(holders.get(resource), resource).toHaveLength(2);
    // The masters taken rotate: no master holds every batch (and each is written to).
    const perNode = [1, 2, 3].map((id) => resources.filter((r) => holders.get(r)!.includes(id)).length);
    expect(Math.max(...perNode)).toBeLessThan(resources.length);
    expect(Math.min(...perNode)).toBeGreaterThan(0);
    // Any one master down (a minority of three): every hold is still there.
    // (Cut off, not crashed: a restarted sandbox master comes back without its data, and two
    // such restarts in a row would be a majority lost.)
    for (const down of [1, 2, 3]) {
      await api.cluster.supervisor.partition(down);
      try {
        for (const resource of resources) {
          const h = await history(resource);
          expect(h.holds, `${resource} with node ${down} down`).toHaveLength(1);
          expect(h.holds[0]).toMatchObject({ principal: 'client:test-client', ended: 'released' });
        }
      } finally {
        await api.cluster.supervisor.heal(down);
      }
    }
  });

  it("the lock service's log across resources, narrowed to one API key, names only that key's entries", async () => {
    const lock = await grant('history-e', 2_000);
    await api.call('POST', '/api/locks/history-e/release', { as: 'client', body: { token: lock.token } });
    const { flushLockHistory } = await import('../../lib/server/lock-history');
    await flushLockHistory();
    const res = await api.call('GET', '/api/lock-history?principal=client%3Atest-client&limit=100', { as: 'viewer' });
    const log = lockServiceLogResponseSchema.parse(await res.json());
    expect(log.entries.length).toBeGreaterThanOrEqual(2);
    expect(new Set(log.entries.map((e) => e.principal))).toEqual(new Set(['client:test-client']));
    expect(log.entries.slice(0, 2).map((e) => `${e.event} ${e.resources.join(',')}`)).toEqual(['released history-e', 'granted history-e']);
    const none = lockServiceLogResponseSchema.parse(
      await (await api.call('GET', '/api/lock-history?principal=client%3Anobody', { as: 'viewer' })).json(),
    );
    expect(none.entries).toEqual([]);
  });

  it('viewers read it; the anonymous and API keys may not', async () => {
    expect((await api.call('GET', '/api/locks/history-a/history', { as: 'viewer' })).status).toBe(200);
    expect((await api.call('GET', '/api/locks/history-a/history')).status).toBe(401);
    expect((await api.call('GET', '/api/locks/history-a/history', { as: 'client' })).status).toBe(403);
    expect((await api.call('GET', '/api/lock-history', { as: 'client' })).status).toBe(403);
  });
});
