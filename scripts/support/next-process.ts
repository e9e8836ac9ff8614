import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export function nextBinary(): string {
  return require.resolve('next/dist/bin/next');
}

/** Start `next start` (or `next dev`) as a child process with the console's environment. */
export function spawnNext(
  mode: 'start' | 'dev',
  options: { cwd: string; port: number; host: string; env: Record<string, string> },
): ChildProcess {
  return spawn(process.execPath, [nextBinary(), mode, '-p', String(options.port), '-H', options.host], {
    cwd: options.cwd,
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1', ...options.env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}

/** Poll GET /api/health until it answers 200, or the child exits, or the deadline passes. */
export async function waitForHealth(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`the console server exited (${child.exitCode ?? child.signalCode}) before it was ready`);
    try {
      const res = await fetch(`${url}/api/health`, { signal: AbortSignal.timeout(2_000) });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the console server did not answer ${url}/api/health within ${timeoutMs} ms`);
}
