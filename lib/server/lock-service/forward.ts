import 'server-only';
import { Agent, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { guardedConnection } from '../http/connection-guard';
import { sendJson } from '../http/node-io';
import { recordSample } from '../history';
import { logger } from '../logger';
import { probeDeparture } from './departure-probe';
import { matchLockService } from './routes';

/**
 * The console forwards the lock routes to the lock-service process (REDLOCK_LOCK_SERVICE_URL, set
 * by `npm start` and docker-compose.yml) instead of answering them itself: one owner per route, the
 * lock service, whichever door a request comes in by. The console's pages (the playground) and any
 * program that only knows the console's address keep working; programs that want the fast path
 * call the service directly.
 *
 * What passes: the method, the path, the headers but the hop-by-hop ones (and those the client's
 * `Connection` names), and the body as it streams; `Host` unchanged (the service's CSRF check
 * compares a session's Origin with it) and the client's address appended to X-Forwarded-For (the
 * service believes it only from an address in its REDLOCK_TRUST_PROXY).
 *
 * What a client's departure does: the forwarded request closes, so a waiting acquire stops waiting
 * and a grant that lands anyway is released by the service (its abort contract). A FIN while the
 * answer is awaited may be a half-close or a departure: as the service does on its own
 * connections, the console then probes the client with `100 Continue` (departure-probe.ts) and a
 * failed write is a departure.
 *
 * What an upstream failure does: unreachable, silent past FORWARD_TIMEOUT_MS, or a loop (the URL
 * names a console): a 503 with a message naming it (504 for silence), never a hang or a 500; an
 * answer cut after its head closes the client's connection (its length is then short: the client
 * sees the cut).
 */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

/** Idle forwarded connections close after this (under the service's shortest idle timeout, 10 s). */
const FREE_SOCKET_MS = 4_000;
/**
 * The longest a forwarded request may go without a byte from the service: past the service's own
 * request timeout (30 s, the bound of an acquire's waitMs), so only a service that stopped answering meets it.
 */
export const FORWARD_TIMEOUT_MS = 40_000;
/** Set on every forwarded request: a console that receives one it would forward again is forwarding to itself. */
const FORWARDED_MARK = 'x-redlock-forwarded-by';

let cached: { raw: string; upstream: URL; agent: Agent } | null = null;

/** The lock service this console forwards to, or null when it answers the lock routes itself. */
export function lockServiceUpstream(env: NodeJS.ProcessEnv = process.env): { upstream: URL; agent: Agent } | null {
  const raw = env.REDLOCK_LOCK_SERVICE_URL?.trim();
  if (!raw) return null;
  if (cached?.raw === raw) return cached;
  let upstream: URL;
  try {
    upstream = new URL(raw);
  } catch {
    throw new Error(`REDLOCK_LOCK_SERVICE_URL must be a URL (http://host:port), got ${raw}`);
  }
  if (upstream.protocol !== 'http:') throw new Error(`REDLOCK_LOCK_SERVICE_URL must be an http:// URL, got ${raw}`);
  if (upstream.username || upstream.password || upstream.search || upstream.hash || (upstream.pathname !== '/' && upstream.pathname !== ''))
    throw new Error(
      `REDLOCK_LOCK_SERVICE_URL is a lock service's origin (http://host:port), with no path, query or credentials; got ${raw}`,
    );
  cached = { raw, upstream, agent: new Agent({ keepAlive: true, maxSockets: 128, timeout: FREE_SOCKET_MS }) };
  return cached;
}

/** Forward the request when it is a lock route and a lock service is configured (returns true); false otherwise. */
export function forwardIfLockService(req: IncomingMessage, res: ServerResponse): boolean {
  const target = lockServiceUpstream();
  const route = target ? matchLockService(req.method, req.url) : null;
  if (!target || !route) return false;
  if (req.headers[FORWARDED_MARK] !== undefined) {
    const message = `this console forwards the lock routes to ${target.upstream.origin}, which sent this request back: REDLOCK_LOCK_SERVICE_URL names a console, not a lock service`;
    sendJson(req, res, 508, { error: { code: 'UNAVAILABLE', message } }, { connection: 'close' });
    return true;
  }
  forward(req, res, target.upstream, target.agent, route.kind === 'acquire');
  return true;
}

/** What the core's acquire event would have said, from the service's answer (the Overview's latency chart reads these samples). */
const ACQUIRE_OUTCOMES: Readonly<Record<number, string>> = { 200: 'ok', 409: 'LockContendedError', 503: 'QuorumUnavailableError' };

function forwardedHeaders(req: IncomingMessage): Record<string, string | string[]> {
  const named = new Set(
    String(req.headers.connection ?? '')
      .split(',')
      .map((t) => t.trim().toLowerCase())
      .filter(Boolean),
  );
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(req.headers))
    if (value !== undefined && !HOP_BY_HOP.has(name) && !named.has(name)) headers[name] = value;
  const peer = req.socket.remoteAddress ?? 'unknown';
  headers['x-forwarded-for'] = req.headers['x-forwarded-for'] ? `${String(req.headers['x-forwarded-for'])}, ${peer}` : peer;
  headers[FORWARDED_MARK] = '1';
  return headers;
}

function forward(req: IncomingMessage, res: ServerResponse, upstream: URL, agent: Agent, acquire: boolean): void {
  const started = performance.now();
  const out = request(
    { host: upstream.hostname, port: upstream.port || 80, method: req.method, path: req.url, headers: forwardedHeaders(req), agent },
    (answer) => {
      stopProbe();
      const status = answer.statusCode ?? 502;
      // The console's own charts (acquire latency, outcomes) see the acquires it forwarded, as they saw its own core's.
      const outcome = acquire ? ACQUIRE_OUTCOMES[status] : undefined;
      if (outcome) recordSample({ kind: 'acquire', ok: status === 200, durationMs: performance.now() - started, outcome });
      // The service authenticated this client (its checks come first): the connection is no longer anonymous.
      if ((status >= 200 && status < 300) || status === 409) guardedConnection(req.socket)?.markAuthenticated();
      const head: string[] = [];
      for (let i = 0; i < answer.rawHeaders.length; i += 2)
        if (!HOP_BY_HOP.has(answer.rawHeaders[i]!.toLowerCase())) head.push(answer.rawHeaders[i]!, answer.rawHeaders[i + 1]!);
      res.writeHead(status, head);
      // An answer cut after its head: close the client's connection (it sees a short body), never leave it waiting.
      answer.once('close', () => {
        if (!answer.complete) res.destroy();
      });
      answer.pipe(res);
    },
  );
  out.setTimeout(FORWARD_TIMEOUT_MS, () =>
    out.destroy(Object.assign(new Error(`no answer within ${FORWARD_TIMEOUT_MS} ms`), { code: 'ETIMEDOUT' })),
  );
  out.on('error', (err: NodeJS.ErrnoException) => {
    stopProbe();
    if (res.headersSent || res.destroyed) return void res.destroy();
    logger().warn({ err: err.message, upstream: upstream.origin }, 'the lock service did not answer a forwarded request');
    const timedOut = err.code === 'ETIMEDOUT';
    const message = `the lock service (${upstream.origin}) did not answer: ${err.message}; the console forwards the lock routes to it (REDLOCK_LOCK_SERVICE_URL)`;
    sendJson(req, res, timedOut ? 504 : 503, { error: { code: 'UNAVAILABLE', message } }, { 'retry-after': '1', connection: 'close' });
  });
  // The client gone before its answer: close the forwarded request (a waiting acquire ends).
  res.once('close', () => {
    stopProbe();
    if (!res.writableFinished) out.destroy();
  });
  // A FIN while the answer is awaited: a half-close or a departure (see the module comment).
  let probe: (() => void) | null = null;
  const onEnd = () => {
    probe ??= probeDeparture(() => {
      if (!res.headersSent && !res.destroyed) res.writeContinue();
    });
  };
  function stopProbe(): void {
    probe?.();
    req.socket?.off('end', onEnd);
  }
  if (req.socket.readableEnded) onEnd();
  else req.socket.once('end', onEnd);
  req.pipe(out);
}
