/**
 * Start and stop what a chaos run needs: the cluster (real redis-server masters with their fault
 * proxies), direct admin connections, the worker processes, the per-client links and the skew
 * proxies. `openRun` cleans up whatever it had started if a later step fails; `closeRun` is
 * idempotent and stops everything, every process included.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { ClusterConfigError, ClusterSupervisor, findRedisServer, REDIS_MISSING_HINT } from '../../lib/cluster';
import { ClientLinks, SkewLinks } from './links';
import type { ChaosProfile } from './profiles';
import type { RunContext } from './run-context';
import { coreSourceDir } from './mutant-build';
import { NodeClocks } from './node-clocks';
import { ChaosWorkers } from './workers';

export interface OpenRunOptions {
  root: string;
  profile: ChaosProfile;
  /** SHA1s of every build's acquire and extend scripts (the skew proxy shortens their leases). */
  leaseScriptShas: readonly string[];
  log(line: string): void;
}

export interface OpenRun extends RunContext {
  close(): Promise<void>;
}

async function startCluster(dataRoot: string, maxTtlMs: number, binary: string): Promise<ClusterSupervisor> {
  for (let attempt = 1; ; attempt++) {
    try {
      // No password: the harness builds its own links and proxies to the nodes (a throwaway cluster in a temporary directory).
      // Started through the clock wrapper (node-clocks.ts), with DEBUG allowed (the rollback-reload trial's DEBUG RELOAD).
      return await ClusterSupervisor.start({
        dataRoot,
        nodes: 5,
        persistence: 'none',
        keyPrefix: 'chaos:',
        maxTtlMs,
        password: null,
        binary,
        extraArgs: ['--enable-debug-command', 'yes'],
      });
    } catch (err) {
      // A free port can be taken between the probe and redis-server's bind: try again.
      if (!(err instanceof ClusterConfigError && err.code === 'PORT_IN_USE') || attempt >= 3) throw err;
    }
  }
}

/**
 * A temporary directory removed by `remove()`, or at process exit if the run is cut short (Ctrl-C
 * exits at once; the 'exit' hooks of the supervisor and the workers stop the processes).
 */
export function scratchDir(prefix: string): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  const remove = () => {
    process.removeListener('exit', remove);
    rmSync(path, { recursive: true, force: true });
  };
  process.once('exit', remove);
  return { path, remove };
}

export async function openRun(options: OpenRunOptions): Promise<OpenRun> {
  const scratch = scratchDir('redlock-chaos-');
  const workDir = scratch.path;
  const origin = process.hrtime.bigint();
  const cleanups: Array<() => Promise<void> | void> = [scratch.remove];
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (err) {
        options.log(`cleanup: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  };
  try {
    const redis = findRedisServer();
    if (!redis) throw new ClusterConfigError(REDIS_MISSING_HINT, 'REDIS_MISSING');
    const clocks = new NodeClocks(join(workDir, 'clocks'), redis);
    cleanups.push(() => clocks.close());
    const supervisor = await startCluster(join(workDir, 'cluster'), options.profile.controlTtlMs, clocks.binary);
    cleanups.push(() => supervisor.shutdown());
    const direct = supervisor.directUrls().map((url) => {
      const client = new Redis(url, { maxRetriesPerRequest: 3, retryStrategy: () => 50 });
      client.on('error', () => undefined);
      return client;
    });
    cleanups.push(() => direct.forEach((c) => c.disconnect()));
    const workers = await ChaosWorkers.start(options.root, options.profile.clients, origin, join(coreSourceDir(options.root), 'index.ts'));
    cleanups.push(() => workers.close());
    const ports = supervisor.nodes().map((n) => n.port);
    const links = await ClientLinks.start(options.profile.clients, ports);
    cleanups.push(() => links.close());
    const skew = await SkewLinks.start(ports, options.leaseScriptShas);
    cleanups.push(() => skew.close());
    return {
      root: options.root,
      origin,
      runId: `${process.pid}-${Date.now().toString(36)}`,
      workDir,
      profile: options.profile,
      supervisor,
      direct,
      workers,
      links,
      skew,
      clocks,
      log: options.log,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
