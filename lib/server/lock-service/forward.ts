import 'server-only';
import { Agent, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { sendJson } from '../http/node-io';
import { logger } from '../logger';
import { matchLockService } from './routes';

/**
 * The console forwards the lock routes to the lock-service process (REDLOCK_LOCK_SERVICE_URL, set
 * by `npm start` and docker-compose.yml) instead of answering them itself: one owner per route, the
 * lock service, whichever door a request comes in by. The console's pages (the playground) and any
 * program that only knows the console's address keep working; programs that want the fast path
 * call the service directly.
 *
 * What passes: the method, the path, the headers but the hop-by-hop ones, and the body as it
 * streams; `Host` unchanged (the service's CSRF check compares a session's Origin with it) and the
 * client's address appended to X-Forwarded-For (the service believes it only from an address in
 * its REDLOCK_TRUST_PROXY). A client that goes away closes the forwarded request too, so a waiting
 * acquire stops waiting (the service's abort contract). An unreachable service is a 503 with a
 * message naming it, never a hang or a 500.
 */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

/** Idle forwarded connections close after this (under the service's shortest idle timeout, 10 s). */
const FREE_SOCKET_MS = 4_000;

let cached: { raw: string; upstream: URL; agent: Agent } | null = null;

/** The lock service this console forwards to, or null when it answers the lock routes itself. */
export function lockServiceUpstream(env: NodeJS.ProcessEnv = process.env): { upstream: URL; agent: Agent } | null {
  const raw = env.REDLOCK_LOCK_SERVICE_URL?.trim();
  if (!raw) return null;
  if (cached?.raw === raw) return cached;
  const upstream = new URL(raw);
  if (upstream.protocol !== 'http:') throw new Error(`REDLOCK_LOCK_SERVICE_URL must be an http:// URL, got ${raw}`);
  cached = { raw, upstream, agent: new Agent({ keepAlive: true, maxSockets: 128, timeout: FREE_SOCKET_MS }) };
  return cached;
}

/** Forward the request when it is a lock route and a lock service is configured (returns true); false otherwise. */
export function forwardIfLockService(req: IncomingMessage, res: ServerResponse): boolean {
  const target = lockServiceUpstream();
  if (!target || !matchLockService(req.method, req.url)) return false;
  forward(req, res, target.upstream, target.agent);
  return true;
}

function forward(req: IncomingMessage, res: ServerResponse, upstream: URL, agent: Agent): void {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(req.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
  const peer = req.socket.remoteAddress ?? 'unknown';
  headers['x-forwarded-for'] = req.headers['x-forwarded-for'] ? `${String(req.headers['x-forwarded-for'])}, ${peer}` : peer;
  const out = request(
    { host: upstream.hostname, port: upstream.port || 80, method: req.method, path: req.url, headers, agent },
    (answer) => {
      const head: string[] = [];
      for (let i = 0; i < answer.rawHeaders.length; i += 2)
        if (!HOP_BY_HOP.has(answer.rawHeaders[i]!.toLowerCase())) head.push(answer.rawHeaders[i]!, answer.rawHeaders[i + 1]!);
      res.writeHead(answer.statusCode ?? 502, head);
      answer.pipe(res);
    },
  );
  out.on('error', (err) => {
    if (res.headersSent || res.destroyed) return void res.destroy();
    logger().warn({ err: err.message, upstream: upstream.origin }, 'the lock service did not answer a forwarded request');
    const message = `the lock service (${upstream.origin}) did not answer: ${err.message}; the console forwards the lock routes to it (REDLOCK_LOCK_SERVICE_URL)`;
    sendJson(req, res, 503, { error: { code: 'UNAVAILABLE', message } }, { 'retry-after': '1', connection: 'close' });
  });
  // The client gone before its answer: close the forwarded request (a waiting acquire ends).
  res.once('close', () => {
    if (!res.writableFinished) out.destroy();
  });
  req.pipe(out);
}
