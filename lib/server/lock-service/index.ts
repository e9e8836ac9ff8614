import 'server-only';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { serveLockService } from './handler';
import type { ConnectionGuard } from '../http/connection-guard';
import { LeanConnections } from './lean-connection';
import { matchLockService } from './routes';

export { LOCK_SERVICE_ROUTES } from './routes';
export type { LeanConnections } from './lean-connection';
export { REFUSED_STATUSES } from './lean-connection';

/**
 * Answer the request here when it is one of the lock service's routes (and return true); otherwise
 * return false and leave it to Next.js. The console's server (scripts/console-server.ts) and the
 * tests' in-process API harness dispatch through this one function.
 */
export function serveIfLockService(req: IncomingMessage, res: ServerResponse): boolean {
  const route = matchLockService(req.method, req.url);
  if (!route) return false;
  void serveLockService(req, res, route);
  return true;
}

/**
 * Put the lean lock-service connections (lean-connection.ts) in front of `server`'s own connection
 * handling: every accepted socket is admitted by `guard` (or refused), starts with them and is
 * handed to Node's HTTP parser at its first request that is not a plain lock-service request.
 * Call before `listen` (lib/server/http/front.ts does).
 */
export function installLeanConnections(server: Server, guard: ConnectionGuard): LeanConnections {
  const listeners = server.listeners('connection');
  if (listeners.length !== 1) throw new Error(`expected Node's one connection listener on the HTTP server, found ${listeners.length}`);
  const nodeConnection = listeners[0] as (socket: Socket) => void;
  server.removeListener('connection', nodeConnection);
  // A client that half-closes after its request gets its answer: Node's server then
  // answers what it read and closes after the last answer, as the lean connections do.
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  const lean = new LeanConnections({ handoff: (socket) => nodeConnection.call(server, socket), guard });
  server.on('connection', lean.accept);
  return lean;
}
