import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
import { ClusterConfigError, ClusterSupervisor, type ClusterOptions } from '../../lib/cluster';

export interface TestCluster {
  supervisor: ClusterSupervisor;
  /** Client URLs (through the fault proxies). */
  urls: string[];
  dataRoot: string;
  /** A client for node `id` through its proxy; closed by stop(). */
  client(id: number, options?: RedisOptions): Redis;
  stop(): Promise<void>;
}

/**
 * Real redis-server masters on free ports in a temporary data root, with fault proxies. Every test
 * file starts its own, so tests never touch a running `npm start` cluster or each other.
 */
export async function startTestCluster(options: Partial<ClusterOptions> = {}): Promise<TestCluster> {
  const dataRoot = mkdtempSync(join(tmpdir(), 'redlock-test-'));
  let supervisor: ClusterSupervisor | null = null;
  for (let attempt = 1; !supervisor; attempt++) {
    try {
      supervisor = await ClusterSupervisor.start({ persistence: 'none', nodes: 5, ...options, dataRoot });
    } catch (err) {
      // A free port can be taken between the probe and redis-server's bind: try again.
      if (!(err instanceof ClusterConfigError && err.code === 'PORT_IN_USE') || attempt >= 3) {
        rmSync(dataRoot, { recursive: true, force: true });
        throw err;
      }
    }
  }
  const clients: Redis[] = [];
  const started = supervisor;
  return {
    supervisor: started,
    urls: started.urls(),
    dataRoot,
    client(id, clientOptions = {}) {
      // Host, port and the sandbox password from the node's URL; a username / password given here
      // wins (ioredis lets a URL's credentials override the options').
      const url = new URL(started.node(id).url);
      const client = new Redis({
        host: url.hostname,
        port: Number(url.port),
        ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
        maxRetriesPerRequest: 0,
        enableOfflineQueue: false,
        lazyConnect: true,
        connectTimeout: 1_000,
        commandTimeout: 1_000,
        retryStrategy: () => 50,
        ...clientOptions,
      });
      client.on('error', () => undefined);
      clients.push(client);
      return client;
    },
    async stop() {
      for (const c of clients) c.disconnect();
      await started.shutdown();
      rmSync(dataRoot, { recursive: true, force: true });
    },
  };
}

/** A key prefix no other test uses, so tests share nodes without FLUSHALL. */
export function uniquePrefix(name: string): string {
  return `t:${name}:${randomBytes(4).toString('hex')}:`;
}

/** Is `pid` a live process (zombies count as dead)? */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

export async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs = 5_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    // poll: waitFor's interval
    await new Promise((r) => setTimeout(r, 20));
  }
}
