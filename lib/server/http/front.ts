import 'server-only';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { serveBeforeNext } from '../before-next';
import { lockServiceUpstream } from '../lock-service/forward';
import { installLeanConnections, REFUSED_STATUSES, type LeanConnections } from '../lock-service';
import { ConnectionGuard, guardedConnection, type GuardedConnection } from './connection-guard';
import type { ConnectionLimits } from './connection-limits';
import { FALLBACK_PAGE_CSP } from './security-headers';

/**
 * The console's HTTP server, as scripts/console-server.ts runs it and the tests' server
 * (test/support/api.ts) copies it: one Node HTTP server whose every connection is admitted by the
 * connection guard (caps, idle timeouts: connection-guard.ts), read first by the lean lock-service
 * connections and then by Node's parser; the routes answered before Next.js (before-next.ts), then
 * `handle` (Next.js) for the rest.
 *
 * What it adds on Node's path, as the lean path does itself:
 * - Node's own headers and request timeouts (`headersMs`, `requestMs`), checked every second, not
 *   every 30 s (Node's default check interval would let a slow head live 50 s past its limit);
 * - a refused answer (401, 403, 429) says `Connection: close` and closes the connection, whoever
 *   wrote it (Next.js, the login route, the lock service);
 * - after each answer, the connection's idle timeout: short while nobody authenticated on it;
 * - a request being answered makes its connection busy (never closed to make room);
 * - a client's FIN while its answer streams (an event stream) ends the stream;
 * - an HTML answer without a Content-Security-Policy gets an inert one (FALLBACK_PAGE_CSP): every
 *   page should have its nonce CSP from proxy.ts, this is the net under a path it does not see.
 */
export interface ConsoleServer {
  server: Server;
  /** The lean lock-service connections in front, or null when this server has none (`lean: false`). */
  lean: LeanConnections | null;
  guard: ConnectionGuard;
}

export type NextHandler = (req: IncomingMessage, res: ServerResponse, connection: GuardedConnection | undefined) => void;

export interface FrontOptions {
  /** The routes answered on Node's objects before `handle` (returns true when it answered). @default serveBeforeNext */
  serveFirst?: (req: IncomingMessage, res: ServerResponse) => boolean;
  /** Put the lean lock-service connections in front (only where this process answers the lock routes itself). @default true unless the lock routes are forwarded to a lock-service process (REDLOCK_LOCK_SERVICE_URL) */
  lean?: boolean;
}

export function createConsoleServer(limits: ConnectionLimits, handle: NextHandler, options: FrontOptions = {}): ConsoleServer {
  const serveFirst = options.serveFirst ?? serveBeforeNext;
  const guard = new ConnectionGuard(limits);
  const server = createServer(
    {
      headersTimeout: limits.headersMs,
      requestTimeout: limits.requestMs,
      keepAliveTimeout: limits.keepAliveMs,
      connectionsCheckingInterval: 1_000,
    },
    (req, res) => {
      const connection = guardedConnection(req.socket);
      if (connection) watch(connection, res);
      if (serveFirst(req, res)) return;
      handle(req, res, connection);
    },
  );
  // Without the lean reader, the guard admits each connection before Node's parser sees it.
  const lean = (options.lean ?? lockServiceUpstream() === null) ? installLeanConnections(server, guard) : admitThroughGuard(server, guard);
  return { server, lean, guard };
}

/** The connection guard in front of Node's own connection handling (no lean reader): a socket over a cap is refused before Node reads it. */
function admitThroughGuard(server: Server, guard: ConnectionGuard): null {
  const listeners = server.listeners('connection');
  if (listeners.length !== 1) throw new Error(`expected Node's one connection listener on the HTTP server, found ${listeners.length}`);
  const nodeConnection = listeners[0] as (socket: Socket) => void;
  server.removeListener('connection', nodeConnection);
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  server.on('connection', (socket: Socket) => {
    const admitted = guard.admit(socket);
    if (!admitted) return;
    // Until its first request, the idle timeout of a connection nobody authenticated on (Node's
    // server destroys it then); each request clears it (`watch`), and each answer sets it again.
    socket.setTimeout(admitted.idleTimeoutMs);
    nodeConnection.call(server, socket);
  });
  return null;
}

function watch(connection: GuardedConnection, res: ServerResponse): void {
  connection.begin();
  // An answer in progress (an event stream, an acquire waiting for its waitMs) is never cut by an
  // idle timeout: Node's headers and request timeouts bound the request, and the idle timeout
  // starts again after the answer (below, and Node's keep-alive timeout).
  connection.socket.setTimeout(0);
  const writeHead = res.writeHead as (this: ServerResponse, ...args: unknown[]) => ServerResponse;
  // Every head goes through writeHead (an implicit one too): a refused answer closes the connection.
  res.writeHead = function (this: ServerResponse, ...args: unknown[]): ServerResponse {
    if (isHtml(this, args) && !hasHeader(this, args, 'content-security-policy'))
      this.setHeader('Content-Security-Policy', FALLBACK_PAGE_CSP);
    if (REFUSED_STATUSES.has(args[0] as number)) this.shouldKeepAlive = false;
    // The Keep-Alive header Node writes says this connection's idle timeout (Node's field for it).
    else if ('_keepAliveTimeout' in this)
      (this as ServerResponse & { _keepAliveTimeout: number })._keepAliveTimeout = connection.idleTimeoutMs;
    return writeHead.apply(this, args);
  } as ServerResponse['writeHead'];
  // The client's FIN during a response already streaming (an event stream): a browser closing
  // its EventSource, not a half-close waiting for an answer (that one's answer has not begun:
  // it is given, lib/server/lock-service/index.ts). End it, as Node's server did before half-open.
  const socket = connection.socket;
  const onClientEnd = () => {
    if (res.headersSent && !res.writableEnded) socket.destroy();
  };
  socket.on('end', onClientEnd);
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    socket.off('end', onClientEnd);
    connection.end();
    // Node set the keep-alive timeout on the socket before this listener ran ('finish'): an
    // anonymous connection's is shorter. Not while another pipelined request is answered.
    if (!connection.authenticated && connection.idle && !connection.socket.destroyed)
      connection.socket.setTimeout(connection.idleTimeoutMs);
  };
  res.once('finish', end);
  res.once('close', end);
}

/** The value of header `name` for this head: set on the response, or given to writeHead (an object or a flat list). */
function headerValue(res: ServerResponse, args: unknown[], name: string): string | undefined {
  const given = args.find((a, i) => i > 0 && typeof a === 'object' && a !== null) as Record<string, unknown> | unknown[] | undefined;
  if (Array.isArray(given)) {
    for (let i = 0; i + 1 < given.length; i += 2) if (String(given[i]).toLowerCase() === name) return String(given[i + 1]);
  } else if (given) {
    for (const key in given) if (key.toLowerCase() === name) return String(given[key]);
  }
  const set = res.getHeader(name);
  return set === undefined ? undefined : String(set);
}

function hasHeader(res: ServerResponse, args: unknown[], name: string): boolean {
  return headerValue(res, args, name) !== undefined;
}

function isHtml(res: ServerResponse, args: unknown[]): boolean {
  return /^\s*text\/html\b/i.test(headerValue(res, args, 'content-type') ?? '');
}
