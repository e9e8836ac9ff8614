import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../lib/cluster';
import { MAX_TTL_MS, OUR_PREFIX } from './cluster';
import { API_KEY, BENCH_QUOTA, OPERATOR } from './console';
import { sleep } from './util';

/**
 * The lock service as its own process (scripts/lock-service-server.ts, the data plane `npm start`
 * runs beside the console and docker-compose.yml runs twice behind HAProxy), on the bench's
 * masters, started directly as production starts it (NODE_ENV=production, tsx, no Next.js build):
 * several may run at once on the same masters, each its own pid for the server-CPU rows.
 */
export interface ServiceProcess {
  child: ChildProcess;
  base: string;
  pid: number;
}

const ROOT = join(import.meta.dirname, '..', '..');

/** A data dir shared by the service processes of one run (as replicas share the masters' state). */
export function serviceDataDir(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'redlock-bench-service-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** `extraEnv`: e.g. REDLOCK_LEAN_HTTP=off, or NODE_OPTIONS with the profiler preload. */
export async function startServiceProcess(
  urls: readonly string[],
  dataDir: string,
  extraEnv: Record<string, string> = {},
): Promise<ServiceProcess> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--import', './scripts/support/server-only-hook.mjs', 'scripts/lock-service-server.ts'],
    {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
      env: {
        ...process.env,
        NODE_ENV: 'production',
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        REDLOCK_DATA_DIR: dataDir,
        REDLOCK_MODE: 'external',
        REDLOCK_NODES: urls.join(','),
        REDLOCK_KEY_PREFIX: OUR_PREFIX,
        REDLOCK_MAX_TTL_MS: String(MAX_TTL_MS),
        REDLOCK_ADMIN_USER: OPERATOR.username,
        REDLOCK_ADMIN_PASSWORD: OPERATOR.password,
        REDLOCK_API_KEYS: `bench=${API_KEY}`,
        REDLOCK_API_KEY_QUOTAS: BENCH_QUOTA,
        ...extraEnv,
      },
    },
  );
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`the lock service exited (${child.exitCode ?? child.signalCode}) before it answered`);
    const ok = await fetch(`${base}/api/health`, { signal: AbortSignal.timeout(2_000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { child, base, pid: child.pid! };
    await sleep(200);
  }
  child.kill('SIGKILL');
  throw new Error('the lock service did not answer /api/health within 120 s');
}

/** SIGTERM (its drain), SIGKILL after 10 s. */
export async function stopServiceProcess(s: ServiceProcess): Promise<void> {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return;
  const exited = new Promise((resolve) => s.child.once('exit', resolve));
  s.child.kill('SIGTERM');
  await Promise.race([exited, sleep(10_000)]);
  if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
}
