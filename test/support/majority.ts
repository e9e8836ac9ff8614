import { expect } from 'vitest';
import { readFenceRegister, tokenOf, type Lock, type Redlock } from '@redlock-console/redlock';
import type { RedisNode } from './redis-nodes';

/**
 * Mark every node clean and give every register the same value: the floors mark-clean writes
 * differ by the milliseconds between the nodes' marks, which would decide a fence comparison.
 */
export async function markCleanLevel(a: Redlock, prefix: string, nodes: readonly RedisNode[]): Promise<void> {
  await a.markNodesClean();
  const top = Math.max(...(await Promise.all(nodes.map((n) => readFenceRegister(n.client, prefix)))));
  for (const n of nodes) await n.client.hset(`${prefix}epoch`, 'fence', String(top));
}

/**
 * Wait until every node has answered every command `a` sent it so far. acquire() returns once a
 * quorum voted for (the round is decided early): the SET to a slower node may still be in flight,
 * and would land on it after the caller changed that node. A release's `settled` waits for every
 * node (the release itself answers at a quorum), and each node's commands travel one connection in
 * order, so its reply comes after the earlier ones. The barrier's resource is one nobody holds: it
 * deletes nothing.
 */
export async function settled(a: Redlock, token: string): Promise<void> {
  await (
    await a.releaseToken('settled-barrier', token)
  ).settled;
}

/**
 * A holds `resource` on nodes 1, 2 and 3 only (a bare majority, the case of the distlock page's
 * crash-recovery argument): nodes 4 and 5 refuse it (a foreign key there), then the key goes —
 * after both answered, or A's SET NX could reach them after the foreign key went (CI saw it).
 */
export async function holdOnMajority(a: Redlock, resource: string, nodes: readonly RedisNode[], ttl: number): Promise<Lock> {
  const key = a.lockKey(resource);
  for (const i of [3, 4]) await nodes[i]!.client.set(key, 'foreign-token', 'PX', 60_000);
  const lock = await a.acquire(resource, ttl);
  await settled(a, lock.token);
  for (const i of [3, 4]) await nodes[i]!.client.del(key);
  const holders = (await Promise.all(nodes.map((n) => n.client.get(key)))).map((v) => v && tokenOf(v));
  expect(holders).toEqual([lock.token, lock.token, lock.token, null, null]);
  return lock;
}
