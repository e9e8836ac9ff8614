import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export function nextBinary(): string {
  return require.resolve('next/dist/bin/next');
}

/**
 * Start the console's HTTP server (scripts/console-server.ts: the lock service's fast path, and
 * Next.js for the rest) as a child process with the console's environment, in production mode or
 * as `next dev`.
 */
export function spawnConsoleServer(
  mode: 'start' | 'dev',
  options: { cwd: string; port: number; host: string; env: Record<string, string> },
): ChildProcess {
  // In the production bundle (the Docker image) the console server is plain JavaScript beside this
  // one: no tsx, no loader hook (scripts/support/server-bundle.ts).
  const args = process.env.REDLOCK_SERVER_BUNDLE
    ? ['dist/server/console-server.mjs']
    : ['--import', 'tsx', '--import', './scripts/support/server-only-hook.mjs', 'scripts/console-server.ts'];
  return spawn(process.execPath, mode === 'dev' ? [...args, '--dev'] : args, {
    cwd: options.cwd,
    env: {
      ...process.env,
      NEXT_TELEMETRY_DISABLED: '1',
      ...options.env,
      NODE_ENV: mode === 'dev' ? 'development' : 'production',
      PORT: String(options.port),
      HOST: options.host,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}

/**
 * Start the lock-service process (scripts/lock-service-server.ts: the data plane, no Next.js) as a
 * child with the console's environment, on its own port.
 */
export function spawnLockService(options: { cwd: string; port: number; host: string; env: Record<string, string> }): ChildProcess {
  const args = process.env.REDLOCK_SERVER_BUNDLE
    ? ['dist/server/lock-service-server.mjs']
    : ['--import', 'tsx', '--import', './scripts/support/server-only-hook.mjs', 'scripts/lock-service-server.ts'];
  return spawn(process.execPath, args, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env, NODE_ENV: 'production', PORT: String(options.port), HOST: options.host },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}

/** Poll GET /api/health until it answers 200, or the child exits, or the deadline passes. */
export async function waitForHealth(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`the server at ${url} exited (${child.exitCode ?? child.signalCode}) before it was ready`);
    try {
      const res = await fetch(`${url}/api/health`, { signal: AbortSignal.timeout(2_000) });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the server at ${url} did not answer /api/health within ${timeoutMs} ms`);
}
