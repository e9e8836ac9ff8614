import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../lib/cluster';
import { waitForHealth } from '../../scripts/support/next-process';
import { credentialsEnv, METRICS_TOKEN } from './api';
import type { TestCluster } from './cluster';

/** A lock-service process (scripts/lock-service-server.ts) as it runs in production. */
export interface LockServiceProcess {
  url: string;
  port: number;
  pid: number;
  /** What it printed (stdout and stderr). */
  output(): string;
  /** Its exit code and signal once it exited (null while it runs). */
  exit(): { code: number | null; signal: NodeJS.Signals | null } | null;
  /** Send `signal` (SIGKILL by default) and wait for the exit. */
  kill(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
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
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--import', './scripts/support/server-only-hook.mjs', 'scripts/lock-service-server.ts'],
    {
      cwd: process.cwd(),
      env: { ...process.env, ...env, NODE_ENV: 'production', PORT: String(port), HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  let ended: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done((ended = { code, signal }))),
  );
  const url = `http://127.0.0.1:${port}`;
  const proc: LockServiceProcess = {
    url,
    port,
    pid: child.pid!,
    output: () => out,
    exit: () => ended,
    async kill(signal = 'SIGKILL') {
      if (ended === null) child.kill(signal);
      return exited;
    },
  };
  try {
    await waitForHealth(url, child, 60_000);
  } catch (err) {
    await proc.kill();
    throw new Error(`${(err as Error).message}\n${out}`);
  }
  return proc;
}
