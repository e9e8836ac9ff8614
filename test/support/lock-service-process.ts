import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { credentialsEnv, METRICS_TOKEN } from './api';
import type { TestCluster } from './cluster';
import { startServerScript, type ServerProcess } from './server-process';

/** A lock-service process (scripts/lock-service-server.ts) as it runs in production. */
export interface LockServiceProcess extends Omit<ServerProcess, 'child'> {
  pid: number;
}

/** The environment several service processes (and consoles) share: the same masters, data dir, keys and users. */
export function serviceEnv(cluster: TestCluster, dataDir: string, maxTtlMs: number): Record<string, string> {
  return {
    REDLOCK_NODES: cluster.urls.join(','),
    REDLOCK_MODE: 'external',
    REDLOCK_DATA_DIR: dataDir,
    REDLOCK_MAX_TTL_MS: String(maxTtlMs),
    REDLOCK_NODE_TIMEOUT_MS: '1000',
    ...credentialsEnv(),
    REDLOCK_METRICS_TOKEN: METRICS_TOKEN,
    LOG_LEVEL: 'warn',
  };
}

/** A data dir of the test's own (the session secret, the operator file), removed by the returned function. */
export function tempDataDir(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'redlock-service-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Start scripts/lock-service-server.ts on a free port; resolved once /api/health answers. */
export async function startLockServiceProcess(env: Record<string, string>): Promise<LockServiceProcess> {
  const server = await startServerScript('scripts/lock-service-server.ts', env);
  return { url: server.url, port: server.port, pid: server.child.pid!, output: server.output, exit: server.exit, kill: server.kill };
}
