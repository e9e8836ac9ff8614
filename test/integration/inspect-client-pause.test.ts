import type { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { LockIndex, lockDetail, readLocks, snapshot } from '@/lib/inspect';
import { startTestCluster, uniquePrefix } from '../support/cluster';
import { fiveNodeClients, putLock } from '../support/locks';

const env = fiveNodeClients();
const PAUSE_MS = 4_000;
/** Each read may take this long: well under the pause, so a read held by it fails the test. */
const TIMEOUT_MS = 1_500;

/** CLIENT PAUSE WRITE on nodes (1-based), as a failover does; lifted again by the returned function. */
async function pauseWrites(clients: readonly Redis[], nodes: readonly number[]): Promise<() => Promise<void>> {
  await Promise.all(nodes.map((id) => clients[id - 1]!.call('CLIENT', 'PAUSE', String(PAUSE_MS), 'WRITE')));
  return async () => {
    await Promise.all(nodes.map((id) => clients[id - 1]!.call('CLIENT', 'UNPAUSE')));
  };
}

describe("a CLIENT PAUSE WRITE (a failover) does not hold the inspector's reads", () => {
  it("scan, lock detail, direct reads and the live index's re-reads answer on paused masters", async () => {
    const { clients } = env;
    const p = uniquePrefix('paused');
    await putLock(clients, p, 'before', 'tok-before-aaaaaaaaaaaaaaa', [1, 2, 3, 4, 5], { meta: { owner: 'svc' } });
    const index = new LockIndex(clients, { keyPrefix: p, manageConfig: true, batchTimeoutMs: TIMEOUT_MS });
    try {
      expect((await index.snapshot()).locks.map((l) => l.resource)).toEqual(['before']);
      // Changed just before the pause: the index must re-read it on the paused nodes.
      await putLock(clients, p, 'changed', 'tok-changed-aaaaaaaaaaaaaa', [1, 2, 3, 4, 5]);
      const unpause = await pauseWrites(clients, [1, 2, 3]);
      try {
        const t0 = performance.now();
        const step = <T>(name: string, p: Promise<T>) =>
          p.catch((e: unknown) => {
            throw new Error(`${name}: ${String(e)}`);
          });
        const [snap, detail, direct, indexed] = await Promise.all([
          step('snapshot', snapshot(clients, { keyPrefix: p, batchTimeoutMs: TIMEOUT_MS })),
          step('detail', lockDetail(clients, 'before', { keyPrefix: p, timeoutMs: TIMEOUT_MS })),
          step('read', readLocks(clients, [{ resource: 'before', key: `${p}lock:before` }], { keyPrefix: p, timeoutMs: TIMEOUT_MS })),
          step('index', index.snapshot()),
        ]);
        expect(performance.now() - t0).toBeLessThan(TIMEOUT_MS);

        expect(snap.nodes.map((n) => [n.node, n.ok, n.error])).toEqual([1, 2, 3, 4, 5].map((n) => [n, true, null]));
        expect(snap.locks.map((l) => [l.resource, l.state, l.holders])).toEqual([
          ['before', 'held', 5],
          ['changed', 'held', 5],
        ]);
        expect(snap.locks[0]!.meta).toEqual({ owner: 'svc' });
        expect(detail.nodes.every((n) => n.ok)).toBe(true);
        expect(detail.view?.holders).toBe(5);
        expect(direct.nodes.every((n) => n.ok)).toBe(true);
        expect(direct.views[0]?.majorityToken).toBe('tok-before-aaaaaaaaaaaaaaa');
        expect(indexed.nodes.map((n) => [n.ok, n.indexed])).toEqual([1, 2, 3, 4, 5].map(() => [true, true]));
        expect(indexed.nodes.slice(0, 3).map((n) => n.reread)).toEqual([1, 1, 1]);
        expect(indexed.locks.map((l) => [l.resource, l.holders, l.majorityToken])).toEqual([
          ['before', 5, 'tok-before-aaaaaaaaaaaaaaa'],
          ['changed', 5, 'tok-changed-aaaaaaaaaaaaaa'],
        ]);

        // Writes are still held: the pause is real. (On a connection of its own: the held SET
        // holds every later command of its connection, the UNPAUSE below included.)
        const writer = env.cluster!.client(1);
        await writer.connect();
        const write = writer.set(`${p}probe`, '1').then(
          () => 'written',
          () => 'refused',
        );
        // absence: 300 ms in which the paused write must not be answered
        const first = await Promise.race([write, new Promise((r) => setTimeout(r, 300, 'held'))]);
        expect(first).toBe('held');
      } finally {
        await unpause();
      }
    } finally {
      index.stop();
    }
  });
});

describe('a server without EVALSHA_RO (Redis 6)', () => {
  const started: { stop(): Promise<void> }[] = [];
  afterAll(async () => {
    await Promise.all(started.map((c) => c.stop()));
  });

  it('is read with EVALSHA and EVAL instead, also after its script cache was flushed', async () => {
    // Renaming the read-only variants away makes them unknown commands, as on Redis 6.
    const cluster = await startTestCluster({
      nodes: 3,
      persistence: 'none',
      extraArgs: ['--rename-command', 'EVALSHA_RO', 'evalsha_ro_off', '--rename-command', 'EVAL_RO', 'eval_ro_off'],
    });
    started.push(cluster);
    const clients = [1, 2, 3].map((id) => cluster.client(id));
    await Promise.all(clients.map((c) => c.connect()));
    await expect(clients[0]!.evalsha_ro('0'.repeat(40), 0)).rejects.toThrow(/unknown command/i);
    const p = uniquePrefix('redis6');
    await putLock(clients, p, 'r', 'tok-r-aaaaaaaaaaaaaaaaaaaa', [1, 2, 3], { meta: { owner: 'old' } });
    for (const flush of [false, true]) {
      if (flush) await Promise.all(clients.map((c) => c.script('FLUSH')));
      const snap = await snapshot(clients, { keyPrefix: p, batchTimeoutMs: TIMEOUT_MS });
      expect(snap.nodes.map((n) => [n.ok, n.error])).toEqual([
        [true, null],
        [true, null],
        [true, null],
      ]);
      expect(snap.locks.map((l) => [l.resource, l.state, l.holders, l.meta])).toEqual([['r', 'held', 3, { owner: 'old' }]]);
      const detail = await lockDetail(clients, 'r', { keyPrefix: p, timeoutMs: TIMEOUT_MS });
      expect(detail.view?.majorityToken).toBe('tok-r-aaaaaaaaaaaaaaaaaaaa');
    }
  });
});
