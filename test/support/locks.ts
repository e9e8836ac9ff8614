import type { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { startTestCluster, type TestCluster } from './cluster';

/**
 * Write locks the way the lock core does, straight to the nodes: `<prefix>lock:<resource>` = token
 * on each of `nodes` (1-based ids into `clients`), and `<prefix>meta:<token>` = the metadata (a
 * JSON string of string values; a raw string is written as is, for malformed cases) when given.
 */
export async function putLock(clients: readonly Redis[], prefix: string, resources: string | readonly string[], token: string,
  nodes: readonly number[], options: { pxMs?: number; meta?: Record<string, string> | string } = {}): Promise<void> {
  const pxMs = options.pxMs ?? 30_000;
  const meta = options.meta;
  await Promise.all(nodes.map(async (id) => {
    const tx = clients[id - 1]!.multi();
    for (const resource of typeof resources === 'string' ? [resources] : resources) tx.set(`${prefix}lock:${resource}`, token, 'PX', pxMs);
    if (meta !== undefined) tx.set(`${prefix}meta:${token}`, typeof meta === 'string' ? meta : JSON.stringify(meta), 'PX', pxMs);
    await tx.exec();
  }));
}

/**
 * Five masters without persistence for the whole test file, and one connected client per node:
 * registers its own beforeAll / afterAll. Read `clients` inside tests (set once the hook ran).
 */
export function fiveNodeClients(): { clients: Redis[]; cluster: TestCluster | null } {
  const env: { clients: Redis[]; cluster: TestCluster | null } = { clients: [], cluster: null };
  beforeAll(async () => {
    env.cluster = await startTestCluster({ nodes: 5, persistence: 'none' });
    env.clients = [1, 2, 3, 4, 5].map((id) => env.cluster!.client(id));
    await Promise.all(env.clients.map((c) => c.connect()));
  });
  afterAll(async () => {
    await env.cluster?.stop();
  });
  return env;
}
