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
 * A holds `resource` on nodes 1, 2 and 3 only (a bare majority, the case of the distlock page's
 * crash-recovery argument): nodes 4 and 5 refuse it (a foreign key there), then the key goes.
 */
export async function holdOnMajority(a: Redlock, resource: string, nodes: readonly RedisNode[], ttl: number): Promise<Lock> {
  const key = a.lockKey(resource);
  for (const i of [3, 4]) await nodes[i]!.client.set(key, 'foreign-token', 'PX', 60_000);
  const lock = await a.acquire(resource, ttl);
  for (const i of [3, 4]) await nodes[i]!.client.del(key);
  const holders = (await Promise.all(nodes.map((n) => n.client.get(key)))).map((v) => v && tokenOf(v));
  expect(holders).toEqual([lock.token, lock.token, lock.token, null, null]);
  return lock;
}
