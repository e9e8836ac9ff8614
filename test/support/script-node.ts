import type { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { startTestCluster, type TestCluster } from './cluster';

/**
 * One real redis-server for a whole test file that runs a script on it directly (the core's
 * `*-mutants` tests), and a connected client of it: registers the file's beforeAll / afterAll and
 * hands the client, and the cluster for further connections, to `ready` once connected.
 */
export function scriptNode(ready: (client: Redis, cluster: TestCluster) => void | Promise<void>): void {
  let cluster: TestCluster | undefined;
  beforeAll(async () => {
    cluster = await startTestCluster({ nodes: 1 });
    const client = cluster.client(1);
    await client.connect();
    await ready(client, cluster);
  });
  afterAll(async () => cluster?.stop());
}
