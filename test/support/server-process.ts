import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from '../../lib/cluster';
import { waitForHealth } from '../../scripts/support/next-process';

export interface ServerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** One of the project's server scripts, running as a process of its own. */
export interface ServerProcess {
  url: string;
  port: number;
  child: ChildProcess;
  /** What it printed (stdout and stderr). */
  output(): string;
  /** Its exit code and signal once it exited (null while it runs). */
  exit(): ServerExit | null;
  /** Send `signal` (SIGKILL by default), unless it already exited, and wait for the exit. */
  kill(signal?: NodeJS.Signals): Promise<ServerExit>;
}

/**
 * Start a server script (scripts/console-server.ts, scripts/lock-service-server.ts) as production
 * runs it: node with tsx and the server-only hook (`nodeArgs` first, e.g. --cpu-prof), NODE_ENV
 * production, on a free port of 127.0.0.1, with `env` over this process's environment. Resolved
 * once GET /api/health answers; a server that exits first, or is not ready within a minute, is
 * killed and the error carries what it printed.
 */
export async function startServerScript(
  script: string,
  env: Record<string, string>,
  options: { cwd?: string; nodeArgs?: string[] } = {},
): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [...(options.nodeArgs ?? []), '--import', 'tsx', '--import', './scripts/support/server-only-hook.mjs', script],
    {
      cwd: options.cwd ?? process.cwd(),
      env: { ...process.env, ...env, NODE_ENV: 'production', PORT: String(port), HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  let ended: ServerExit | null = null;
  const exited = new Promise<ServerExit>((done) => child.once('exit', (code, signal) => done((ended = { code, signal }))));
  const url = `http://127.0.0.1:${port}`;
  const server: ServerProcess = {
    url,
    port,
    child,
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
    await server.kill();
    throw new Error(`${(err as Error).message}\n${out}`);
  }
  return server;
}
