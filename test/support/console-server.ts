import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest, Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureSecretFile, startControlServer, type ControlServer } from '../../lib/cluster';
import { isBuildCurrent } from '../../scripts/support/build-state';
import { API_KEY, credentialsEnv, USERS } from './api';
import { startTestCluster, type TestCluster } from './cluster';
import { startServerScript } from './server-process';

/**
 * The console as it runs in production, as a real process: scripts/console-server.ts (the lean
 * lock service in front, the built Next.js app for the rest) on a port of its own, against a real
 * sandbox cluster (fault proxies included) and the control channel served from the test process.
 * A test can SIGKILL it and start it again on the same masters and data dir (a crash and a
 * restart). Needs a current console build (`npm test` builds before the tests; by hand:
 * `node --import tsx scripts/build.ts --if-stale`, or NEXT_DIST_DIR=… for a build of one's own).
 * REDLOCK_TEST_STALE_BUILD=1 accepts a build older than the sources (while others edit them);
 * REDLOCK_TEST_CONSOLE_ROOT runs the console of another checkout (its own build), e.g. the commit
 * before a fix, to see a test fail there.
 */
export interface ConsoleProcess {
  url: string;
  port: number;
  child: ChildProcess;
  /** What it printed (stdout and stderr). */
  output(): string;
  /** Kill it with `signal` and wait for its exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export interface ConsoleCluster {
  cluster: TestCluster;
  dataDir: string;
  /** Start a console process (another one, or again after a kill), resolved once /api/health answers; `nodeArgs` go to node first (e.g. --cpu-prof). */
  start(env?: Record<string, string>, nodeArgs?: string[]): Promise<ConsoleProcess>;
  stop(): Promise<void>;
}

export async function startConsoleCluster(options: { nodes?: number; maxTtlMs?: number } = {}): Promise<ConsoleCluster> {
  const root = process.env.REDLOCK_TEST_CONSOLE_ROOT ?? process.cwd();
  if (!isBuildCurrent(root) && process.env.REDLOCK_TEST_STALE_BUILD !== '1')
    throw new Error('needs a current console build: node --import tsx scripts/build.ts --if-stale (npm test builds first)');
  const maxTtlMs = options.maxTtlMs ?? 3_000;
  const cluster = await startTestCluster({ nodes: options.nodes ?? 5, persistence: 'none', maxTtlMs });
  const dataDir = mkdtempSync(join(tmpdir(), 'redlock-console-proc-'));
  const secretFile = join(dataDir, 'control.secret');
  const control: ControlServer = await startControlServer(cluster.supervisor, ensureSecretFile(secretFile));
  const running = new Set<ConsoleProcess>();
  const baseEnv: Record<string, string> = {
    REDLOCK_NODES: cluster.urls.join(','),
    REDLOCK_MODE: 'sandbox',
    REDLOCK_CONTROL_URL: control.url,
    REDLOCK_CONTROL_SECRET_FILE: secretFile,
    REDLOCK_DATA_DIR: dataDir,
    REDLOCK_MAX_TTL_MS: String(maxTtlMs),
    ...credentialsEnv(),
    LOG_LEVEL: 'warn',
    NEXT_TELEMETRY_DISABLED: '1',
  };
  return {
    cluster,
    dataDir,
    async start(env = {}, nodeArgs = []) {
      const server = await startServerScript('scripts/console-server.ts', { ...baseEnv, ...env }, { cwd: root, nodeArgs });
      const proc: ConsoleProcess = {
        url: server.url,
        port: server.port,
        child: server.child,
        output: server.output,
        async kill(signal = 'SIGKILL') {
          await server.kill(signal);
          running.delete(proc);
        },
      };
      running.add(proc);
      return proc;
    },
    async stop() {
      await Promise.all([...running].map((p) => p.kill('SIGKILL')));
      await control.close();
      await cluster.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * One HTTP request to the console over a real socket, from `localAddress` (any 127.0.0.x on
 * Linux loopback: each is another client address for the console), on `agent`'s connections.
 */
export function send(
  url: string,
  method: string,
  path: string,
  options: {
    headers?: Record<string, string>;
    body?: unknown;
    localAddress?: string;
    agent?: Agent;
    timeoutMs?: number;
    /** Aborting it closes the socket (a client that leaves). */
    signal?: AbortSignal;
  } = {},
): Promise<HttpAnswer> {
  const target = new URL(path, url);
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method,
        agent: options.agent,
        localAddress: options.localAddress,
        signal: options.signal,
        headers: {
          ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }),
          ...options.headers,
        },
        timeout: options.timeoutMs ?? 30_000,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer in ${options.timeoutMs ?? 30_000} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** A signed-in session on the console process: its cookie, CSRF token and device cookie. */
export interface ProcessSession {
  cookie: string;
  csrf: string;
  device: string;
  headers(url: string): Record<string, string>;
}

export async function signIn(
  url: string,
  who: 'operator' | 'viewer',
  options: { localAddress?: string; device?: string; timeoutMs?: number } = {},
): Promise<ProcessSession> {
  const res = await send(url, 'POST', '/api/auth/login', {
    body: USERS[who],
    localAddress: options.localAddress,
    headers: options.device ? { cookie: options.device } : {},
    timeoutMs: options.timeoutMs,
  });
  if (res.status !== 200) throw new Error(`login as ${who}: ${res.status} ${res.body}`);
  const cookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]!);
  const cookie = cookies.find((c) => c.startsWith('rl_session='))!;
  const device = cookies.find((c) => c.startsWith('rl_device='))!;
  const { csrfToken } = JSON.parse(res.body) as { csrfToken: string };
  return {
    cookie,
    csrf: csrfToken,
    device,
    headers: (origin) => ({ cookie, 'x-csrf-token': csrfToken, origin }),
  };
}

export const CLIENT_AUTH = { authorization: `Bearer ${API_KEY}` };
