import 'server-only';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { serveLockService } from './handler';
import { matchLockService } from './routes';

export { LOCK_SERVICE_ROUTES } from './routes';

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
