import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QuorumUnavailableError, Redlock, markNodeClean, readFenceRegister } from '@redlock-console/redlock';
import { startTestCluster, uniquePrefix, waitFor, type TestCluster } from '@/test/support/cluster';

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));

beforeAll(() => {
  process.on('unhandledRejection', onUnhandled);
});
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
});

function directClients(cluster: TestCluster): Redis[] {
  return cluster.supervisor.directUrls().map((url) => {
    const client = new Redis(url, { maxRetriesPerRequest: 1, retryStrategy: () => 50 });
    client.on('error', () => undefined);
    return client;
  });
}

/**
 * An acquire that must be granted, asked again (up to 10 times) when its only refusals were late or
 * failed answers: with two nodes cut off, one reachable node answering after nodeTimeoutMs on a
 * loaded machine leaves two votes of five ("2 for, 3 timeout"). Any other refusal (quarantined,
 * held) is thrown at once: it is what the test is about.
 */
async function grantThroughLoad(r: Redlock, resource: string, ttlMs: number) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await r.acquire(resource, ttlMs);
    } catch (err) {
      const late =
        err instanceof QuorumUnavailableError && err.votes.every((v) => v.vote === 'for' || /^(timeout|pending|error)$/.test(v.reason));
      if (!late || attempt >= 10) throw err;
    }
  }
}

function expectStrictlyIncreasing(fences: number[]): void {
  for (let i = 1; i < fences.length; i++) {
    if (!(fences[i]! > fences[i - 1]!)) throw new Error(`fence ${i} (${fences[i]}) is not above fence ${i - 1} (${fences[i - 1]})`);
  }
}

describe('fencing tokens', () => {
  it('many clients, one resource, hundreds of grants, aof-always nodes crashing and restarting: fences strictly increase in grant order', async () => {
    const cluster = await startTestCluster({ nodes: 5, persistence: 'aof-always' });
    const prefix = uniquePrefix('fence-chaos');
    const clients = Array.from(
      { length: 8 },
      () => new Redlock(cluster.urls, { keyPrefix: prefix, maxTtlMs: 1_000, retryCount: 1_000, retryDelayMs: 20, retryJitterMs: 20 }),
    );
    try {
      await clients[0]!.markNodesClean();
      const fences: number[] = [];
      let holder: number | null = null;
      let overlaps = 0;
      let done = false;
      const target = 300;

      const worker = async (k: number) => {
        while (!done) {
          const lock = await clients[k]!.acquire('the-resource', 500).catch(() => null);
          if (!lock) continue;
          if (holder !== null) overlaps++;
          holder = k;
          fences.push(lock.fence!);
          if (fences.length >= target) done = true;
          // work: the holder's work
          await sleep(Math.random() * 2);
          holder = null;
          await lock.release();
        }
      };
      const chaos = async () => {
        let crashes = 0;
        while (!done) {
          // A holder whose release cannot reach the crashed node leaves its key there until the
          // ttl (availability, not safety), and a crashed node sits out maxTtlMs from its restart
          // (a crash is never trusted, even with aof-always): crash a node every ~600 ms, one at
          // a time, so that at most two are out at once.
          // pace: a crash every ~600 ms, one at a time
          await sleep(600);
          if (done) break;
          const id = 1 + (crashes % 5);
          await cluster.supervisor.crash(id);
          // pace: down a moment before the restart
          await sleep(30);
          await cluster.supervisor.restart(id, { persistence: 'aof-always' });
          crashes++;
        }
        return crashes;
      };
      const [crashes] = await Promise.all([chaos(), ...clients.map((_, k) => worker(k))]);
      expect(crashes).toBeGreaterThanOrEqual(2);
      expect(overlaps).toBe(0);
      expect(fences.length).toBeGreaterThanOrEqual(target);
      expectStrictlyIncreasing(fences);
    } finally {
      await Promise.all(clients.map((c) => c.quit()));
      await cluster.stop();
    }
  }, 180_000); // hundreds of grants with restarts: at load 12+ it ran past 60 s doing the same work (its assertions, not its time, are the test)

  it('a node that lost its data (persistence none) is reseeded from the other nodes, not its clock: fences after its quarantine exceed every fence before, even in a majority with stale registers', async () => {
    const cluster = await startTestCluster({ nodes: 5, persistence: 'none' });
    const direct = directClients(cluster);
    // Node timeouts and TTLs with room for a loaded machine (at 100 ms a stalled reply from one of the
    // three reachable nodes read as too few votes); the cut-off nodes still time out within a TTL.
    const maxTtlMs = 2_000;
    const r = new Redlock(cluster.urls, { keyPrefix: uniquePrefix('reseed'), maxTtlMs, retryCount: 0, nodeTimeoutMs: 500 });
    const quarantines: Array<{ node: number; discovered: boolean; until: number }> = [];
    r.on('quarantine', (e) => quarantines.push({ node: e.node, discovered: e.discovered, until: e.until }));
    try {
      // Nodes 4 and 5 are marked clean (their registers seeded at now × 1000) a little before 1–3,
      // so their registers are older than every fence issued below.
      const prefix = r.settings.keyPrefix;
      for (const i of [3, 4]) await markNodeClean(direct[i]!, { keyPrefix: prefix, maxTtlMs });
      // pace: nodes 4 and 5 are marked clean a little before 1–3
      await sleep(20);
      for (const i of [0, 1, 2]) await markNodeClean(direct[i]!, { keyPrefix: prefix, maxTtlMs });
      // Grants while nodes 4 and 5 are cut off: only the registers of 1, 2 and 3 advance.
      await cluster.supervisor.partition(4);
      await cluster.supervisor.partition(5);
      const before: number[] = [];
      for (let i = 0; i < 30; i++) {
        const lock = await grantThroughLoad(r, 'resource', 1_500);
        before.push(lock.fence!);
        await lock.release();
      }
      expectStrictlyIncreasing(before);
      const highest = before.at(-1)!;
      expect(await readFenceRegister(direct[0]!, prefix)).toBe(highest);
      expect(await readFenceRegister(direct[2]!, prefix)).toBe(highest);
      expect(await readFenceRegister(direct[3]!, prefix)).toBeLessThan(before[0]!);
      expect(await readFenceRegister(direct[4]!, prefix)).toBeLessThan(before[0]!);

      // Node 3 loses everything, its register included; 4 and 5 come back with old registers.
      await cluster.supervisor.crash(3);
      await cluster.supervisor.restart(3, { persistence: 'none' });
      expect(await direct[2]!.get(`${prefix}fence`)).toBeNull();
      await cluster.supervisor.heal(4);
      await cluster.supervisor.heal(5);
      // Only 3, 4 and 5 can vote now: the one node that saw the newest fences is the one that forgot them.
      await cluster.supervisor.partition(1);
      await cluster.supervisor.partition(2);

      // Our connection to node 3 reconnects after its restart; until then it votes `error`.
      let refused: unknown = null;
      await waitFor(
        async () => {
          refused = await r.acquire('resource', 1_500).catch((e: unknown) => e);
          // (or, on a loaded machine, answers late: a timeout or pending vote is asked again too)
          return !/^(error|timeout|pending)$/.test((refused as QuorumUnavailableError).votes?.[2]?.reason ?? '');
        },
        5_000,
        'node 3 to answer again',
      );
      expect(refused).toBeInstanceOf(QuorumUnavailableError);
      const vote = (refused as QuorumUnavailableError).votes[2]!;
      expect(vote.reason).toBe('quarantined');
      // The node votes quarantined at once; the quarantine it starts is reported right after.
      await waitFor(() => quarantines.some((q) => q.node === 3 && q.discovered), 1_000, 'the quarantine event');
      const until = quarantines.find((q) => q.node === 3 && q.discovered)!.until;
      // The discovery reseeded the register to now × 1000 (the hybrid-logical-clock floor).
      expect(await readFenceRegister(direct[2]!, prefix)).toBeGreaterThan(highest);

      await waitFor(() => Date.now() > until + 20, maxTtlMs + 2_000, 'the end of the quarantine');
      // Its register must now come up to the other nodes' (reseed.ts): that needs N − quorum + 1 = 3
      // of them, and only 4 and 5 answer, whose registers never saw the newest fences. Node 3 keeps
      // voting against rather than trust its clock's floor.
      for (let i = 0; i < 3; i++) {
        const held = await r.acquire('resource', 1_500).catch((e: unknown) => e);
        expect(held).toBeInstanceOf(QuorumUnavailableError);
        // Against: quarantined, or timeout when the reseed's reads of the cut-off nodes outlast the round.
        expect((held as QuorumUnavailableError).votes[2]).toMatchObject({
          vote: 'against',
          reason: expect.stringMatching(/^(quarantined|timeout)$/),
        });
      }
      // Node 1 answers again (node 2 stays cut off): the reseed reads 1, 4 and 5, and node 3 votes.
      await cluster.supervisor.heal(1);
      await waitFor(
        async () =>
          await r.acquire('resource', 1_500).then(
            (l) => l.release().then(() => true),
            () => false,
          ),
        5_000,
        'node 3 reseeded',
      );
      expect(await readFenceRegister(direct[2]!, prefix)).toBeGreaterThanOrEqual(highest);
      await cluster.supervisor.partition(1);
      const after: number[] = [];
      for (let i = 0; i < 5; i++) {
        const lock = await grantThroughLoad(r, 'resource', 1_500);
        expect(lock.fence).toBeGreaterThan(highest);
        after.push(lock.fence!);
        await lock.release();
      }
      expectStrictlyIncreasing([...before, ...after]);
    } finally {
      await r.quit();
      for (const c of direct) c.disconnect();
      await cluster.stop();
    }
  }, 60_000);

  it('no unhandled rejections happened in this file', () => {
    expect(unhandled).toEqual([]);
  });
});
