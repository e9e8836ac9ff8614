import { spawn } from 'node:child_process';
import { freePort } from '../../lib/cluster';
import { HAPROXY, which } from '../../scripts/support/system-packages';
import { waitFor } from './cluster';

/**
 * The real load balancer of docker-compose.yml: Debian's haproxy running deploy/haproxy/haproxy.cfg
 * itself (not a copy), its addresses given through the environment as compose gives them, on
 * 127.0.0.1. `npm test` installs the package as root (scripts/ensure-packages.ts), as `.ci/run` does.
 */
export interface Balancer {
  /** The console frontend (CONSOLE_BIND). */
  consoleUrl: string;
  /** The lock-service frontend (LOCKS_BIND). */
  locksUrl: string;
  output(): string;
  stop(): Promise<void>;
}

export const HAPROXY_CONFIG = 'deploy/haproxy/haproxy.cfg';

/** Debian's haproxy (in /usr/sbin, often off a user's PATH), or an error that says how to get it. */
function haproxyBinary(): string {
  const found = which(HAPROXY);
  if (!found) throw new Error(HAPROXY.hint);
  return found;
}

export async function startBalancer(servers: { consoles: [string, string]; lockServices: [string, string] }): Promise<Balancer> {
  const [consolePort, locksPort] = [await freePort(), await freePort()];
  const env = {
    CONSOLE_BIND: `127.0.0.1:${consolePort}`,
    LOCKS_BIND: `127.0.0.1:${locksPort}`,
    CONSOLE_1: servers.consoles[0],
    CONSOLE_2: servers.consoles[1],
    LOCK_SERVICE_1: servers.lockServices[0],
    LOCK_SERVICE_2: servers.lockServices[1],
  };
  const child = spawn(haproxyBinary(), ['-db', '-f', HAPROXY_CONFIG], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const locksUrl = `http://127.0.0.1:${locksPort}`;
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`haproxy exited (${child.exitCode}): ${out}`);
        return fetch(`${locksUrl}/api/health`, { signal: AbortSignal.timeout(1_000) }).then(
          (r) => r.ok,
          () => false,
        );
      },
      15_000,
      'haproxy forwarding to a lock service',
    );
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return {
    consoleUrl: `http://127.0.0.1:${consolePort}`,
    locksUrl,
    output: () => out,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
