import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import {
  ensureSecretFile,
  SANDBOX_CONTROL_ENV,
  startControlServer,
  startScenarioSandbox,
  type ControlServer,
  type ScenarioSandbox,
} from '../../lib/cluster';
import { matchAuthRoute } from '../../lib/server/auth-routes/routes';
import { matchEventStream } from '../../lib/server/events/stream-route';
import { matchLockService } from '../../lib/server/lock-service/routes';
import { PEER_HEADER, readPeer } from '../../lib/server/http/peer';
import type { Persistence } from '../../lib/cluster/persistence';
import type { GuardStats } from '../../lib/server/http/connection-guard';
import type { ConnectionLimits } from '../../lib/server/http/connection-limits';
import { startTestCluster, type TestCluster } from './cluster';
import { closeConsoles, currentConsole, startConsoles } from './console-process';

export const USERS = {
  operator: { username: 'op', password: 'operator-password-1' },
  viewer: { username: 'viewer', password: 'viewer-password-1' },
} as const;
export const API_KEY = 'client-key-0123456789abcdef0123';
export const METRICS_TOKEN = 'metrics-token-0123456789abcdef';

/** Who may sign in and call, as the console's environment names them: the test users and the API client's key. */
export function credentialsEnv(): Record<string, string> {
  return {
    REDLOCK_ADMIN_USER: USERS.operator.username,
    REDLOCK_ADMIN_PASSWORD: USERS.operator.password,
    REDLOCK_VIEWER_USER: USERS.viewer.username,
    REDLOCK_VIEWER_PASSWORD: USERS.viewer.password,
    REDLOCK_API_KEYS: `test-client=${API_KEY}`,
  };
}

export type Who = 'anonymous' | 'viewer' | 'operator' | 'client';

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;

/** Every route file under app/api, by its URL pattern. A test checks this list against the disk. */
const ROUTE_FILES = import.meta.glob<Record<string, Handler>>('../../app/api/**/route.ts');

export interface ApiHarness {
  cluster: TestCluster;
  /** The teaching sandbox (`startApi({ sandbox: true })`): the scenarios' own masters, as `npm start` runs them. */
  sandbox: ScenarioSandbox | null;
  /** The cluster's lease ceiling: a test's own Redlock must use the same one. */
  maxTtlMs: number;
  dataDir: string;
  call(
    method: string,
    path: string,
    options?: { as?: Who; body?: unknown; rawBody?: string; headers?: Record<string, string> },
  ): Promise<Response>;
  stop(): Promise<void>;
}

/**
 * The console's route handlers, called in-process with real Requests, against a real sandbox
 * cluster and the real control channel. Env is set before the first import of lib/server, whose
 * runtime is a process-wide singleton (one harness per test file).
 */
export async function startApi(
  options: {
    nodes?: number;
    maxTtlMs?: number;
    persistence?: Persistence;
    sandbox?: boolean;
    /** REDLOCK_SCENARIO_READING_MS: a scenario's pause between steps (the console's default when unset). */
    scenarioReadingMs?: number;
    /**
     * REDLOCK_NODE_TIMEOUT_MS: the lock service's per-node deadline. 1 s unless a test says
     * otherwise, as in e2e (playwright.config.ts): with the console's 100 ms default a busy two-core
     * host (a clean-clone run at load 9) read a stalled test process as masters that did not
     * answer, and three files' acquires and reads answered 503. The tests about that deadline
     * set it (lock-service-node-timeout.test.ts; security-connections.test.ts counts the 503s a
     * stalled event loop makes at 100 ms).
     */
    nodeTimeoutMs?: number;
  } = {},
): Promise<ApiHarness> {
  const cluster = await startTestCluster({
    nodes: options.nodes ?? 5,
    persistence: options.persistence ?? 'none',
    maxTtlMs: options.maxTtlMs ?? 3_000,
  });
  const dataDir = mkdtempSync(join(tmpdir(), 'redlock-api-'));
  const secretFile = join(dataDir, 'control.secret');
  const control: ControlServer = await startControlServer(cluster.supervisor, ensureSecretFile(secretFile));
  // Scenarios run on masters of their own or not at all (lib/cluster/sandbox.ts): started only when asked.
  const sandbox = options.sandbox ? await startScenarioSandbox({ dataDir, keyPrefix: 'rl:', maxTtlMs: options.maxTtlMs ?? 3_000 }) : null;
  for (const name of Object.values(SANDBOX_CONTROL_ENV)) delete process.env[name];
  if (options.scenarioReadingMs === undefined) delete process.env.REDLOCK_SCENARIO_READING_MS;
  else process.env.REDLOCK_SCENARIO_READING_MS = String(options.scenarioReadingMs);
  process.env.REDLOCK_NODE_TIMEOUT_MS = String(options.nodeTimeoutMs ?? 1_000);
  Object.assign(process.env, sandbox?.env ?? {}, {
    REDLOCK_NODES: cluster.urls.join(','),
    REDLOCK_MODE: 'sandbox',
    REDLOCK_CONTROL_URL: control.url,
    REDLOCK_CONTROL_SECRET_FILE: secretFile,
    REDLOCK_DATA_DIR: dataDir,
    REDLOCK_MAX_TTL_MS: String(options.maxTtlMs ?? 3_000),
    ...credentialsEnv(),
    REDLOCK_METRICS_TOKEN: METRICS_TOKEN,
    LOG_LEVEL: 'silent',
  });
  const sessions = new Map<Who, { cookie: string; csrf: string }>();
  // One console at a time answers (test/support/console-process.ts: restarts and second consoles).
  startConsoles({ startFront: () => startLockServiceServer(), routes: ROUTE_FILES });
  const lockService = () => currentConsole().frontServer<LockServiceServer>();

  async function session(who: 'viewer' | 'operator') {
    const existing = sessions.get(who);
    if (existing) return existing;
    const res = await invoke('POST', '/api/auth/login', { 'content-type': 'application/json' }, JSON.stringify(USERS[who]));
    if (res.status !== 200) throw new Error(`login as ${who} failed: ${res.status} ${await res.text()}`);
    const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
    const { csrfToken } = (await res.json()) as { csrfToken: string };
    sessions.set(who, { cookie, csrf: csrfToken });
    return sessions.get(who)!;
  }

  async function invoke(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Response> {
    const url = new URL(path, 'http://console.test');
    // The lock service, the event stream, sign-in and sign-out are answered before Next.js on a
    // Node request, as in the console's server (lib/server/before-next.ts).
    const target = `${url.pathname}${url.search}`;
    if (matchLockService(method, target) || matchEventStream(target) || matchAuthRoute(method, target))
      return (await lockService()).send(method, path, headers, body);
    const { handler, params } = await resolve(url.pathname, method);
    const req = new Request(url, { method, headers: { host: 'console.test', ...headers }, body });
    return handler(req, { params: Promise.resolve(params) });
  }

  return {
    cluster,
    sandbox,
    maxTtlMs: options.maxTtlMs ?? 3_000,
    dataDir,
    async call(method, path, { as = 'anonymous', body, rawBody, headers = {} } = {}) {
      const h: Record<string, string> = {};
      if (as === 'client') h.authorization = `Bearer ${API_KEY}`;
      if (as === 'viewer' || as === 'operator') {
        const s = await session(as);
        h.cookie = s.cookie;
        h['x-csrf-token'] = s.csrf;
        h.origin = 'http://console.test';
      }
      const payload = rawBody ?? (body === undefined ? undefined : JSON.stringify(body));
      if (payload !== undefined) h['content-type'] = 'application/json';
      const res = await invoke(method, path, { ...h, ...headers }, method === 'GET' || method === 'HEAD' ? undefined : payload);
      if (path.startsWith('/api/auth/logout')) sessions.delete(as); // that session is revoked now
      return res;
    },
    async stop() {
      await closeConsoles();
      await control.close();
      await sandbox?.close();
      await cluster.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** URL patterns of every route file, e.g. "/api/locks/[resource]/extend". */
export function routePatterns(): string[] {
  return Object.keys(ROUTE_FILES).map((file) => file.replace('../../app', '').replace(/\/route\.ts$/, ''));
}

async function resolve(pathname: string, method: string): Promise<{ handler: Handler; params: Record<string, string> }> {
  const segments = pathname.split('/').filter(Boolean);
  for (const file of Object.keys(ROUTE_FILES)) {
    const pattern = file
      .replace('../../app', '')
      .replace(/\/route\.ts$/, '')
      .split('/')
      .filter(Boolean);
    if (pattern.length !== segments.length) continue;
    const params: Record<string, string> = {};
    const ok = pattern.every((p, i) => {
      const m = /^\[(\w+)\]$/.exec(p);
      if (m) {
        try {
          params[m[1]!] = decodeURIComponent(segments[i]!); // Next.js decodes each segment once
        } catch {
          params[m[1]!] = '\u0000undecodable';
        }
        return true;
      }
      return p === segments[i];
    });
    if (!ok) continue;
    if (Object.values(params).includes('\u0000undecodable')) return { handler: async () => new Response(null, { status: 404 }), params };
    const mod = await currentConsole<Record<string, Handler>>().route(file);
    const handler = mod[method];
    if (!handler) return { handler: async () => new Response(null, { status: 405 }), params };
    return { handler, params };
  }
  return { handler: async () => new Response(null, { status: 404 }), params: {} };
}

export interface LockServiceServer {
  port: number;
  /** The connections the server holds open now (Node's own count of accepted, unclosed sockets). */
  connections(): Promise<number>;
  /** The connection guard's counts (lib/server/http/connection-guard.ts). */
  guard(): GuardStats;
  /** One request over a real socket, answered as a Web Response (its body streamed as it comes). */
  send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Response>;
  close(): Promise<void>;
}

/**
 * The routes answered before Next.js (the lock service, the event stream: lib/server/before-next.ts)
 * on a real Node HTTP server on 127.0.0.1, the console's own (lib/server/http/front.ts): the
 * connection guard and the lean connections in front (plain lock-service requests answered on the
 * socket), Node's parser and the same dispatch for every request they hand over (anything else
 * answers 404 here). Imported lazily, after the harness has set the environment. `limits` shorten
 * or scale down the console's connection limits (lib/server/http/connection-limits.ts) for the
 * tests of slow, idle and flooding clients.
 */
export async function startLockServiceServer(limits: Partial<ConnectionLimits> = {}): Promise<LockServiceServer> {
  const { createConsoleServer } = await import('../../lib/server/http/front');
  const { connectionLimits } = await import('../../lib/server/http/connection-limits');
  const { server, lean, guard } = createConsoleServer(connectionLimits(process.env, limits), (_req, res) => void res.writeHead(404).end());
  server.prependListener('request', simulatePeer);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    guard: () => guard.stats(),
    connections: () => new Promise((resolve, reject) => server.getConnections((err, n) => (err ? reject(err) : resolve(n)))),
    send(method, path, headers, body) {
      // A test's peer stamp travels as TEST_PEER_HEADER: the server's own stamp (peer.ts) would overwrite it.
      const { [PEER_HEADER]: stamp, ...rest } = headers;
      if (stamp !== undefined) rest[TEST_PEER_HEADER] = stamp;
      return new Promise((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, path, method, headers: { host: 'console.test', ...rest } }, (res) => {
          const out = new Headers();
          // One Set-Cookie per cookie (getSetCookie() lists them), every other header as one value.
          for (const [k, v] of Object.entries(res.headers))
            if (Array.isArray(v)) v.forEach((one) => out.append(k, one));
            else if (v !== undefined) out.set(k, v);
          const status = res.statusCode ?? 0;
          // No body for the statuses that have none (a Response refuses one); the socket's bytes
          // as they come otherwise (an event stream never ends by itself).
          const empty = status === 204 || status === 304 || method === 'HEAD';
          if (empty) res.resume();
          resolve(new Response(empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), { status, headers: out }));
        });
        req.on('error', reject);
        req.end(body);
      });
    },
    async close() {
      server.closeAllConnections();
      lean?.closeAll();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

/** Where the harness carries a test's peer stamp over the socket (see simulatePeer). */
const TEST_PEER_HEADER = 'x-test-peer';

/**
 * The tests name client addresses they cannot bind (203.0.113.9 …) by a peer stamp
 * (lib/server/http/peer.ts's `peerStamp`), as the console's server stamps what it hands to Next.js.
 * A route answered before Next.js reads its peer from the socket (client-address.ts,
 * nodeRequestAddress): for a request carrying a test's stamp, the socket says that address while
 * the request is read, as if the client were there. Nothing of it is the console's code.
 */
function simulatePeer(req: IncomingMessage): void {
  const stamp = req.headers[TEST_PEER_HEADER];
  delete (req.socket as { remoteAddress?: string }).remoteAddress; // the socket's own again (the prototype's getter)
  if (typeof stamp !== 'string') return;
  const peer = readPeer(new Request('http://console.test', { headers: { [PEER_HEADER]: stamp } }));
  if (!peer) throw new Error(`not a peer stamp of this process: ${stamp}`);
  Object.defineProperty(req.socket, 'remoteAddress', { value: peer.address ?? undefined, configurable: true });
}

/** A response the test expects to be 200: its JSON body (the status and body in the failure otherwise). */
export async function okJson<T>(res: Response): Promise<T> {
  const text = await res.text();
  if (res.status !== 200) throw new Error(`expected 200, got ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

/** An error answer of the API, with the details a test reads (the holder, the quota, the limits). */
export type RefusedBody = { error: { code: string; message: string; details?: Record<string, unknown> } };

/** A response the test expects to be refused with `status` and error `code`, saying why: its body. */
export async function refusedJson(res: Response, status: number, code: string): Promise<RefusedBody> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  const body = JSON.parse(text) as RefusedBody;
  expect(body.error.code).toBe(code);
  expect(body.error.message.length).toBeGreaterThan(0);
  return body;
}
