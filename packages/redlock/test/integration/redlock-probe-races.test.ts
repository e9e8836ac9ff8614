import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Redlock } from '@redlock-console/redlock';
import type { LockNode } from '../../src/node';
import { FenceCall } from '../../src/fence-group';
import { uniquePrefix } from '@/test/support/cluster';
import { commandProxy } from '@/test/support/command-proxy';
import { NO_PERSISTENCE, startRedisNode, startRedisNodes, type RedisNode } from '@/test/support/redis-nodes';

// Races a hostile review found in the fast paths, on real redis-server: a restart
// between the fast probe's proof and its read, and a fence round whose grant round was slow.

const DEBUG = [...NO_PERSISTENCE, '--enable-debug-command', 'yes'];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let nodes: RedisNode[] = [];
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  await Promise.all(nodes.map((n) => n.stop()));
  nodes = [];
});

/** Make node i answer nothing for `ms` (DEBUG SLEEP from another connection). */
function slow(node: RedisNode, ms: number): void {
  void node.client.call('DEBUG', 'SLEEP', String(ms / 1000));
}

describe('the fast probe against a restart between its commands', () => {
  it("the upstream restarts (from an older snapshot) between the proof and the read, behind a command-level proxy: the later grant's fence is still above the earlier ones", async () => {
    nodes = await startRedisNodes(() => DEBUG, 3);
    const p2 = await startRedisNode(NO_PERSISTENCE);
    await p2.crash();
    const px = commandProxy(nodes[1]!.port, p2.port);
    cleanups.push(
      () => p2.stop(),
      () => void px.server.close(),
    );
    await new Promise((resolve) => px.server.once('listening', resolve));
    const urls = [nodes[0]!.url, `redis://127.0.0.1:${px.port()}`, nodes[2]!.url];
    // A node timeout of 1 s and a 300 ms sleep for the node meant to be pending (30 ms was once
    // outrun on a loaded machine by node 2's proxy, which runs in this process: node 3 voted and
    // node 2 was the pending one); the fence round's hedge, 3 × the grant round, stays below it.
    const r = new Redlock(urls, { keyPrefix: uniquePrefix('gap'), retryCount: 0, nodeCheckIntervalMs: 60_000, nodeTimeoutMs: 1_000 });
    cleanups.push(() => r.quit());
    await r.markNodesClean();
    await r.connect();
    // Settled: node 2's delete is in before its snapshot is taken (a release answers at a quorum).
    await (
      await (await r.acquire('res', 10_000)).release()
    ).settled;
    // The snapshot the "restarted" process loads: node 2's data as this client's check left it.
    await nodes[1]!.client.save();
    copyFileSync(join(nodes[1]!.dir, 'dump.rdb'), join(p2.dir, 'dump.rdb'));
    await p2.start([...NO_PERSISTENCE]);
    // Two grants while node 3 is slow (pending, never asked): confirmed on nodes 1 and 2 only.
    const fencesA: number[] = [];
    for (let i = 0; i < 2; i++) {
      slow(nodes[2]!, 300);
      // pace: the slow node's delay is in place
      await sleep(3);
      const a = await r.acquire('res', 10_000);
      fencesA.push(a.fence!);
      // Granted by nodes 1 and 2 (the proxy answers without Nagle's delay: command-proxy.ts).
      expect(a.votes.map((v) => v.reason)).toEqual(['ok', 'ok', 'pending']);
      await a.release();
      await nodes[2]!.client.ping(); // node 3's sleep is over (its PING queues behind the DEBUG SLEEP)
    }
    // B: node 1 slow (pending at the early decision); node 2's upstream is replaced by the old
    // snapshot's process right after the proof. Trusting the read would give B a register from
    // before A's confirmations there: a fence not above A's.
    px.arm();
    slow(nodes[0]!, 300);
    // pace: the slow node's delay is in place
    await sleep(3);
    const b = await r.acquire('res', 10_000);
    expect(px.switched()).toBe(1);
    expect(b.fence!).toBeGreaterThan(Math.max(...fencesA));
    // The restarted node is found by the check that follows the failed transaction.
    expect(b.votes[1]).toMatchObject({ vote: 'against', reason: 'quarantined' });
    await b.release();
  });
});

describe('the fence round after a slow grant round', () => {
  it('a grant round of ~400 ms (3 × that is past half the 1 s node deadline) and an early voter stalling: the pending nodes are still asked, and it is granted', async () => {
    nodes = await startRedisNodes(() => DEBUG, 5);
    for (let trial = 0; trial < 3; trial++) {
      const r = new Redlock(
        nodes.map((n) => n.url),
        // The default deadline is 100 ms and this was ~40/60 ms: a loaded machine (another test
        // file, a mutation run) added enough to lose node 3's vote. Ten times both keeps the ratio.
        // The fence round's hedge is under test: no fence proposed with the grant (fence-ahead.ts).
        { keyPrefix: uniquePrefix('hedge'), retryCount: 0, nodeTimeoutMs: 1_000, fenceAhead: false },
      );
      cleanups.push(() => r.quit());
      await r.markNodesClean();
      await r.connect();
      await (await r.acquire('warm', 5_000)).release();
      const first = (r as unknown as { nodes: LockNode[] }).nodes[0]!;
      const callMerged = first.callMerged.bind(first);
      let stalled = false;
      first.callMerged = (kind, merge, member, reply) => {
        if (!(member instanceof FenceCall)) return callMerged(kind, merge, member, reply);
        stalled = true; // node 1 stalls between the two rounds
      };
      // Node 3 answers its grant at ~400 ms (the quorum's last voter), nodes 4 and 5 at ~600 ms (pending).
      slow(nodes[2]!, 400);
      slow(nodes[3]!, 600);
      slow(nodes[4]!, 600);
      // pace: the slow nodes' delays are in place
      await sleep(3);
      const lock = await r.acquire('res', 10_000);
      expect(stalled).toBe(true);
      expect(lock.fence).toBeGreaterThan(0);
      await lock.release();
      // Every node's sleep is over (a PING queues behind its DEBUG SLEEP) before the next trial.
      await Promise.all(nodes.map((n) => n.client.ping()));
    }
  });
});
