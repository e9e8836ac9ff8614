import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../lib/cluster';
import { MAX_TTL_MS, OUR_PREFIX } from './cluster';
import { sleep } from './util';

/**
 * The built console (`scripts/start.ts`, production server) on the bench's masters, for the
 * workloads that measure it over HTTP: started with an API key and an operator, built first when
 * there is no build or the sources are newer than it.
 */
export const API_KEY = 'bench-client-key-0123456789abcdef';
export const OPERATOR = { username: 'bench-operator', password: 'bench-operator-password' };
const ROOT = join(import.meta.dirname, '..', '..');

export interface Console {
  child: ChildProcess;
  /** The console (control plane): pages, event streams, sign-in; it forwards the lock routes. */
  base: string;
  /** The lock service (data plane) the console's start runs beside it: the lock routes' own process. */
  service: string;
  dataDir: string;
}

/**
 * The bench's API key may make far more acquires a second than the default quota (2,000): the
 * quota is still checked on every acquire (its cost is measured), it just never refuses one.
 */
export const BENCH_QUOTA = 'bench:rate=1000000,burst=2000000';

/** `extraEnv`: more environment for the console (e.g. NODE_OPTIONS with --cpu-prof for a profile). */
export async function startConsole(
  urls: readonly string[],
  log: (line: string) => void,
  extraEnv: Record<string, string> = {},
): Promise<Console> {
  // The same stamp (a hash of the sources) as `npm start` checks: a build judged current here is not
  // rebuilt by the console's start inside the health wait below (sources edited since are built now).
  log('building the console if its sources changed since the last build (scripts/build.ts --if-stale)');
  const build = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/build.ts', '--if-stale'], { cwd: ROOT, stdio: 'ignore' });
  if (build.status !== 0) throw new Error('the console build failed: run `npm run build` to see why');
  const port = await freePort();
  const servicePort = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'redlock-bench-console-'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
    cwd: ROOT,
    stdio: 'ignore',
    env: {
      ...process.env,
      NODE_ENV: 'production',
      PORT: String(port),
      REDLOCK_SERVICE_PORT: String(servicePort),
      HOST: '127.0.0.1',
      REDLOCK_DATA_DIR: dataDir,
      REDLOCK_NODES: urls.join(','),
      REDLOCK_KEY_PREFIX: OUR_PREFIX,
      REDLOCK_MAX_TTL_MS: String(MAX_TTL_MS),
      REDLOCK_ADMIN_USER: OPERATOR.username,
      REDLOCK_ADMIN_PASSWORD: OPERATOR.password,
      REDLOCK_API_KEYS: `bench=${API_KEY}`,
      REDLOCK_API_KEY_QUOTAS: BENCH_QUOTA,
      ...extraEnv,
    },
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 300_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the console exited (${child.exitCode}) before it answered`);
    const ok = await fetch(`${base}/api/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { child, base, service: `http://127.0.0.1:${servicePort}`, dataDir };
    await sleep(250);
  }
  child.kill('SIGKILL');
  throw new Error('the console did not answer /api/health within 300 s');
}

export async function stopConsole(c: Console): Promise<void> {
  const exited = new Promise((resolve) => c.child.once('exit', resolve));
  c.child.kill('SIGINT');
  await Promise.race([exited, sleep(20_000)]);
  if (c.child.exitCode === null) c.child.kill('SIGKILL');
  rmSync(c.dataDir, { recursive: true, force: true });
}

export async function signIn(base: string): Promise<string> {
  const res = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: base },
    body: JSON.stringify(OPERATOR),
  });
  if (!res.ok) throw new Error(`sign-in failed: ${res.status} ${await res.text()}`);
  return res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
}
