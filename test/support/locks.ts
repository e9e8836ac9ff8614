import type { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { startTestCluster, type TestCluster } from './cluster';

/**
 * Write locks the way the lock core does, straight to the nodes: `<prefix>lock:<resource>` =
 * `<token> <metadata>` on each of `nodes` (1-based ids into `clients`; every resource gets the
 * same value), the metadata being a JSON object of string values, or a raw string written as is
 * after the space (for malformed cases). Without `meta` the value is the bare token.
 */
export async function putLock(
  clients: readonly Redis[],
  prefix: string,
  resources: string | readonly string[],
  token: string,
  nodes: readonly number[],
  options: { pxMs?: number; meta?: Record<string, string> | string } = {},
): Promise<void> {
  const pxMs = options.pxMs ?? 30_000;
  const meta = options.meta;
  const value = meta === undefined ? token : `${token} ${typeof meta === 'string' ? meta : JSON.stringify(meta)}`;
  await Promise.all(
    nodes.map(async (id) => {
      const tx = clients[id - 1]!.multi();
      for (const resource of typeof resources === 'string' ? [resources] : resources)
        tx.set(`${prefix}lock:${resource}`, value, 'PX', pxMs);
      await tx.exec();
    }),
  );
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
