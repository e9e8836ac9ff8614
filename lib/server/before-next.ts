import 'server-only';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { EVENT_STREAM_ROUTES, serveIfEventStream } from './events/node-stream';
import { LOCK_SERVICE_ROUTES, serveIfLockService } from './lock-service';

/**
 * The routes answered on Node's request and response before Next.js sees the request (the
 * console's server, scripts/console-server.ts, and the tests' API harness dispatch through
 * serveBeforeNext): the lock service's (lock-service/) and the event stream (events/node-stream.ts),
 * the two whose cost per request or per chunk Next.js's machinery would multiply. They have no
 * Next.js route handler: one owner per route.
 */
export const ROUTES_BEFORE_NEXT: ReadonlyArray<{ method: string; pattern: string }> = Object.freeze([
  ...LOCK_SERVICE_ROUTES,
  ...EVENT_STREAM_ROUTES,
]);

/** Answer the request here when it is one of ROUTES_BEFORE_NEXT (and return true); otherwise return false. */
export function serveBeforeNext(req: IncomingMessage, res: ServerResponse): boolean {
  return serveIfLockService(req, res) || serveIfEventStream(req, res);
}
