import 'server-only';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { loginBodySchema, logoutBodySchema } from '../../api/auth';
import { authenticate } from '../auth';
import { login, logout, type AuthAnswer, type AuthRequest } from '../auth-service';
import { nodeRequestAddress } from '../http/client-address';
import { guardedConnection } from '../http/connection-guard';
import { errorParts } from '../http/error-response';
import { API_SECURITY_HEADERS, headerReader, hstsFor, readJsonBody, sendJson } from '../http/node-io';
import { authorize, checkSessionCsrf, parseInput } from '../http/request-checks';
import { logger } from '../logger';
import { matchAuthRoute, type AuthRoute } from './routes';

/**
 * Answer the request here when it is sign-in or sign-out (routes.ts) and return true; otherwise
 * return false (another route answers it). The console's server and the tests' API harness
 * dispatch through lib/server/before-next.ts.
 */
export function serveIfAuthRoute(req: IncomingMessage, res: ServerResponse): boolean {
  const route = matchAuthRoute(req.method, req.url);
  if (!route) return false;
  serveAuthRoute(req, res, route).catch((err: unknown) => {
    // errorParts answers every error the route throws; this is a fault in answering itself.
    logger().error({ err }, 'the sign-in route failed');
    if (!res.headersSent) sendJson(req, res, 500, { error: { code: 'INTERNAL', message: 'internal error (logged on the server)' } });
    else res.destroy();
  });
  return true;
}

/**
 * Login and logout on Node's request and response, with the checks every Next.js route makes, in
 * the same order (lib/server/http/route.ts): authenticate, authorize (login: anyone; logout: a
 * session or any principal that may read), the CSRF proof of a cookie session, then the body (its
 * headers before a byte is read, at most 64 KiB of it, JSON) against lib/api's schema, and the one
 * error mapper. The answers are the ones the Next.js route gave: the same status, JSON body,
 * cookies (one Set-Cookie each) and the API's security headers (node-io.ts), `no-store`.
 *
 * The client's address (login limits, audit) is the socket's peer, or what a trusted proxy says
 * (client-address.ts), read here from the socket rather than from the stamp the server puts on
 * the requests it hands to Next.js (http/peer.ts).
 */
async function serveAuthRoute(req: IncomingMessage, res: ServerResponse, route: AuthRoute): Promise<void> {
  if (route.kind === 'wrong-method') {
    if (route.method === 'OPTIONS')
      return void res.writeHead(204, [...API_SECURITY_HEADERS, ...hstsFor(req), 'Allow', 'OPTIONS, POST']).end();
    const error = { error: { code: 'METHOD_NOT_ALLOWED', message: `${route.method} is not allowed here; send POST` } };
    return sendJson(req, res, 405, error, { allow: 'OPTIONS, POST', ...(req.complete ? {} : { connection: 'close' }) });
  }
  const headers = headerReader(req);
  let bodyRead = false;
  try {
    const principal = await authenticate({ headers });
    authorize(principal, route.kind === 'login' ? 'public' : 'read');
    checkSessionCsrf(principal, 'POST', headers, `${req.socket.localAddress ?? ''}:${req.socket.localPort ?? ''}`);
    if (principal.kind !== 'anonymous') guardedConnection(req.socket)?.markAuthenticated();
    const raw = await readJsonBody(req, headers);
    bodyRead = true;
    const request: AuthRequest = { headers, address: nodeRequestAddress(req), secure: req.headers['x-forwarded-proto'] === 'https' };
    let answer: AuthAnswer<unknown>;
    if (route.kind === 'login') {
      const { username, password } = parseInput(loginBodySchema, raw, 'body') as { username: string; password: string };
      answer = await login(request, username, password);
    } else answer = await logout(request, principal, parseInput(logoutBodySchema, raw, 'body') as { everywhere?: boolean });
    sendJson(req, res, 200, answer.body, { 'set-cookie': answer.cookies });
  } catch (err) {
    const { status, body, headers: extra } = errorParts(err);
    // Refused before the body was read: close rather than read the rest of it (as the lock service does).
    const closing = !bodyRead && !req.complete;
    sendJson(req, res, status, body, closing ? { ...extra, connection: 'close' } : extra);
  }
}
