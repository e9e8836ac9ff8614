import { Lock, Redlock, RedlockError } from '@redlock-console/redlock';
import { waitFor } from '@/test/support/cluster';
import type { RedisNode } from '@/test/support/redis-nodes';
import { nodeOf } from './lock-node';

// The steps the clock-check tests share (redlock-clock-steps, redlock-clock-attacks,
// redlock-rollback): a client with a reading of every node, an acquire retried until node 3
// answers, a key gone, node 3's clock past a moment.

/**
 * Until `r` has read every node's clock: a jump before a client's first reading of a node is its
 * baseline (clock-check.ts), and on a loaded machine a node's first reply can come after the grant
 * was decided or after the node timeout, so one acquire is not enough.
 */
export async function warmClocks(r: Redlock, nodes: readonly RedisNode[]): Promise<void> {
  await waitFor(
    async () => {
      const lock = await r.acquire('warm-up', 2_000).catch(() => null);
      if (lock) await (await lock.release()).settled;
      return nodes.every((_, i) => nodeOf(r, i).clock.last !== null);
    },
    10_000,
    'every node read',
  );
}

/** One acquire by `r`, again while node 3 votes `error` or `pending` (it may be reconnecting, or answer late). */
export async function attemptAnswered(r: Redlock, resource = 'res', ttl = 2_000): Promise<Lock | Error> {
  let outcome: Lock | Error = new Error('not tried');
  await waitFor(
    async () => {
      outcome = await r.acquire(resource, ttl).catch((e: Error) => e);
      const vote = outcome instanceof Lock || outcome instanceof RedlockError ? outcome.votes[2] : undefined;
      if (vote?.reason !== 'error' && vote?.reason !== 'pending') return true;
      if (outcome instanceof Lock) await outcome.release();
      return false;
    },
    5_000,
    'node 3 to answer',
  );
  return outcome;
}

/** Until A's key of `resource` is gone from node `n` (expired early by a step of its clock). */
export async function keyGone(a: Redlock, n: RedisNode, resource = 'res'): Promise<void> {
  await waitFor(async () => (await n.client.exists(a.lockKey(resource))) === 0, 3_000, `A's key to be gone from the node`);
}

/** Until node `n`'s own clock (its TIME) is past `ms`: a quarantine on it is over. */
export async function nodeClockPast(n: RedisNode, ms: number, timeoutMs: number): Promise<void> {
  await waitFor(async () => (await n.client.time()).map(Number)[0]! * 1_000 > ms, timeoutMs, "the node's clock past the moment");
}
