import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { ClusterSupervisor } from '../../lib/cluster';
import { DEFAULT_SETTINGS, markNodeClean } from '@redlock-console/redlock';

/** The key prefix and lease ceiling of our lock core in every workload (the console's defaults). */
export const OUR_PREFIX = DEFAULT_SETTINGS.keyPrefix;
export const MAX_TTL_MS = 60_000;

/**
 * Five local redis-server masters for the whole run: no fault proxies (the bench talks to redis
 * directly), no persistence, fresh data directories (marked clean by the supervisor). SIGSTOP /
 * SIGCONT go through the supervisor's pause / resume; every paused node is resumed before the
 * cluster stops, whatever happened.
 */
export class BenchCluster {
  /** One plain client per node for setup (flush, populate, INFO); never used while a node is paused. */
  readonly admin: Redis[];
  private readonly paused = new Set<number>();

  private constructor(
    readonly supervisor: ClusterSupervisor,
    readonly urls: string[],
    private readonly dataRoot: string,
    readonly redisVersion: string,
  ) {
    this.admin = urls.map((url) => {
      const client = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 2_000 });
      client.on('error', () => undefined);
      return client;
    });
  }

  static async start(root: string, nodes = 5): Promise<BenchCluster> {
    const dataRoot = join(root, `cluster-${process.pid}`);
    rmSync(dataRoot, { recursive: true, force: true });
    const supervisor = await ClusterSupervisor.start({
      dataRoot,
      nodes,
      proxies: false,
      persistence: 'none',
      keyPrefix: OUR_PREFIX,
      maxTtlMs: MAX_TTL_MS,
      // No password: every peer and the bench's own MONITOR reader connect as in earlier runs (a throwaway cluster).
      password: null,
    });
    const urls = supervisor.directUrls();
    const probe = new Redis(urls[0]!, { maxRetriesPerRequest: 1 });
    const info = await probe.info('server');
    probe.disconnect();
    const version = /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown';
    return new BenchCluster(supervisor, urls, dataRoot, version);
  }

  get size(): number {
    return this.urls.length;
  }

  /** Empty every node and write our clean epoch sentinel again (as on a fresh data directory). */
  async reset(): Promise<void> {
    await Promise.all(
      this.admin.map(async (client) => {
        await client.flushall();
        await markNodeClean(client, { keyPrefix: OUR_PREFIX, maxTtlMs: MAX_TTL_MS, origin: 'bench reset' });
      }),
    );
  }

  /** SIGSTOP nodes (1-based ids). */
  async pause(ids: readonly number[]): Promise<void> {
    for (const id of ids) {
      this.paused.add(id);
      await this.supervisor.pause(id);
    }
  }

  /** SIGCONT nodes paused before. */
  async resume(ids: readonly number[] = [...this.paused]): Promise<void> {
    for (const id of ids) {
      if (!this.paused.has(id)) continue;
      await this.supervisor.resume(id);
      this.paused.delete(id);
    }
  }

  /** Resume everything, close the clients, stop the nodes and remove the data root. */
  async stop(): Promise<void> {
    try {
      await this.resume();
    } finally {
      for (const client of this.admin) client.disconnect();
      await this.supervisor.shutdown();
      rmSync(this.dataRoot, { recursive: true, force: true });
    }
  }

  /** For fatal paths: SIGKILL every node now (SIGKILL also ends a stopped process). */
  killSync(): void {
    this.supervisor.killAllSync();
  }
}

/** CPU seconds (user + sys) the masters have used so far, summed over the nodes (INFO cpu). */
export async function redisCpuSeconds(cluster: BenchCluster): Promise<number> {
  const infos = await Promise.all(cluster.admin.map((client) => client.info('cpu')));
  let total = 0;
  for (const info of infos) {
    total += Number(/used_cpu_user:([\d.]+)/.exec(info)?.[1] ?? 0) + Number(/used_cpu_sys:([\d.]+)/.exec(info)?.[1] ?? 0);
  }
  return total;
}
