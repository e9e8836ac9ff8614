import 'server-only';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { serveIfAuthRoute } from './auth-routes/handler';
import { serveIfEventStream } from './events/node-stream';
import { serveIfLockService } from './lock-service';
import { forwardIfLockService } from './lock-service/forward';

/**
 * Answer the request here when it is one of the routes answered on Node's request and response
 * before Next.js sees it (and return true); otherwise return false. The console's server
 * (scripts/console-server.ts) and the tests' API harness dispatch through this one function. The
 * routes: the lock service's (lock-service/routes.ts, LOCK_SERVICE_ROUTES) and the event stream
 * (events/stream-route.ts, EVENT_STREAM_ROUTES), the two whose cost per request or per chunk
 * Next.js's machinery would multiply, and sign-in and sign-out (auth-routes/routes.ts,
 * AUTH_ROUTES), which anyone can send at any rate: through Next.js a flood of refused logins took
 * the event loop the lock service answers on. They have no Next.js route handler: one owner per route.
 * Where a lock-service process runs (REDLOCK_LOCK_SERVICE_URL: `npm start`, docker-compose.yml),
 * the lock routes are forwarded to it (lock-service/forward.ts) and never answered in this process.
 */
export function serveBeforeNext(req: IncomingMessage, res: ServerResponse): boolean {
  return forwardIfLockService(req, res) || serveIfLockService(req, res) || serveIfEventStream(req, res) || serveIfAuthRoute(req, res);
}
