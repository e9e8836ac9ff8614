import { describe, expect, it } from 'vitest';
import {
  LockContendedError,
  QuorumUnavailableError,
  readEpoch,
  Redlock,
  RedlockError,
  type Lock,
  type RedlockSettings,
} from '@redlock-console/redlock';
import { uniquePrefix, waitFor } from '@/test/support/cluster';
import { holdOnMajority as holdOnMajorityOf, markCleanLevel } from '@/test/support/majority';
import { DEFAULT_RDB, NO_PERSISTENCE, type RedisNode } from '@/test/support/redis-nodes';
import { testBed } from '../support/test-bed';

// Two classes of broken build that the chaos CI profile let through, each caught here by
// what a holder sees, not by one field of the sentinel, so that the slip is caught wherever it is made
// (probe.lua, grant-verdict.ts, grant-group.ts):
// - a restart quarantine that lasts a fraction of the lease ceiling: a node restarted from an older
//   snapshot must vote 'quarantined' until at least its crash + maxTtlMs (every lock it granted before
//   the crash may still be held until then);
// - evicted_keys growth no longer starting an eviction quarantine, on the path a warm client takes
//   (the fast probe between two checks, grant-group.ts), not only on a fresh client's first check.
// Each was applied by hand (docs/mutation.md) and fails these tests.

// Long enough that a crash, restart and first probe, or A's hold through the eviction below, fit in
// it on a loaded machine (at 4 s a StrykerJS dry run at load 6 ran past it).
const MAX_TTL = 8_000;
let nodes: RedisNode[] = [];
const bed = testBed({ maxTtlMs: MAX_TTL, retryCount: 0, nodeTimeoutMs: 1_000 });
const client = (urls: readonly string[], prefix: string, settings: Partial<RedlockSettings> = {}) =>
  bed.client(prefix, settings, [...urls]);

/** One node's own vote through a one-node Redlock (quorum 1); 'ok' when it granted. */
async function voteOf(one: Redlock, resource: string): Promise<string> {
  const outcome = await one.acquire(resource, 500, { fenced: false }).catch((e: unknown) => e);
  if (outcome instanceof RedlockError) return outcome.votes[0]?.reason ?? 'none';
  await (outcome as Lock).release();
  return 'ok';
}

describe('two mutation classes the chaos profile missed, caught by what a client sees', () => {
  it('a restart quarantine lasts the whole lease ceiling: the restarted node votes quarantined until crash + maxTtlMs at least', async () => {
    nodes = await bed.start(() => DEFAULT_RDB);
    const prefix = uniquePrefix('restart-ceiling');
    const urls = nodes.map((n) => n.url);
    const a = client(urls, prefix);
    await markCleanLevel(a, prefix, nodes);
    // The snapshot node 3 comes back with: the sentinel of the process about to crash.
    await nodes[2]!.client.save();
    const crashAt = Date.now();
    await nodes[2]!.crash();
    await nodes[2]!.start();

    // Node 3 alone (quorum 1): poll its vote until it stops saying 'quarantined'. A busy machine
    // only makes the end seen later, never earlier, so the bound below holds however slow the run.
    const one = client([nodes[2]!.url], prefix);
    const votes: string[] = [];
    let endSeenAt = 0;
    await waitFor(
      async () => {
        const vote = await voteOf(one, `probe-${votes.length}`);
        votes.push(vote);
        if (vote === 'quarantined' || /^(error|timeout|pending)$/.test(vote)) return false;
        endSeenAt = Date.now();
        return true;
      },
      MAX_TTL + 10_000,
      "the end of node 3's quarantine",
    );
    expect(votes).toContain('quarantined');
    expect((await readEpoch(nodes[2]!.client, prefix))?.cause).toBe('restart');
    expect(endSeenAt - crashAt).toBeGreaterThanOrEqual(MAX_TTL);
  });

  it('keys evicted between two checks quarantine the node for a warm client too (its fast probe), and the evicted lock is not granted again', async () => {
    nodes = await bed.start(() => NO_PERSISTENCE);
    const prefix = uniquePrefix('evicted-fast');
    const urls = nodes.map((n) => n.url);
    const a = client(urls, prefix);
    await a.markNodesClean();
    const lockA = await holdOnMajorityOf(a, 'res', nodes, MAX_TTL);
    // B checks every node now, then probes fast (no check due for a minute): the eviction below
    // is seen only by the fast probe's evicted_keys comparison (grant-group.ts) and the check it asks for.
    const b = client(urls, prefix, { nodeCheckIntervalMs: 60_000 });
    const warm = await b.acquire('warm', 3_000);
    await warm.release();

    // Node 3 evicts A's key (volatile-lru under memory pressure), then the policy is put back. The
    // sentinel and the anchor (no TTL) survive a volatile-* eviction, so nothing else gives it away.
    const n = nodes[2]!.client;
    await n.config('SET', 'maxmemory-policy', 'volatile-lru');
    const used = Number(/used_memory:(\d+)/.exec(await n.info('memory'))![1]);
    await n.config('SET', 'maxmemory', String(used + 256 * 1024));
    for (let i = 0; i < 40 && (await n.exists(a.lockKey('res'))) === 1; i++) {
      const pipeline = n.pipeline();
      for (let k = 0; k < 200; k++) pipeline.set(`filler:${i}:${k}`, 'x'.repeat(1_024), 'PX', 60_000);
      await pipeline.exec().catch(() => undefined);
    }
    expect(await n.exists(a.lockKey('res'))).toBe(0);
    expect(await n.exists(`${prefix}anchor`)).toBe(1);
    await n.config('SET', 'maxmemory', '0');
    await n.config('SET', 'maxmemory-policy', 'noeviction');

    const refused = await b.acquire('res', 3_000).catch((e: unknown) => e);
    // A still holds nodes 1 and 2; node 3 granting would have given B nodes 3, 4 and 5: two holders.
    expect(refused).toBeInstanceOf(LockContendedError);
    expect(refused).not.toBeInstanceOf(QuorumUnavailableError);
    expect((refused as LockContendedError).votes[2]).toMatchObject({ vote: 'against', reason: 'quarantined' });
    expect(lockA.validityMs).toBeGreaterThan(0);
    expect(await readEpoch(n, prefix)).toMatchObject({ cause: 'eviction' });
  });
});
