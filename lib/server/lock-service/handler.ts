import 'server-only';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import { acquireBodySchema, extendBodySchema, releaseBodySchema, resourceParamsSchema } from '../../api/locks';
import { authenticate, type HeaderReader } from '../auth';
import { errorParts } from '../http/error-response';
import { badRequest } from '../http/errors';
import { authorize, checkSessionCsrf, parseInput } from '../http/request-checks';
import { acquireLock, extendLock, releaseLock } from './operations';
import { semaphoreAcquireBodySchema, slotsExtendBodySchema, slotsReleaseBodySchema } from '../../api/semaphores';
import { rwAcquireBodySchema } from '../../api/rwlocks';
import { acquirePermit, acquireRwLock, extendSlots, releaseSlots } from './slot-operations';
import { API_SECURITY_HEADERS, headerReader, hstsFor, readJsonBody, sendJson } from '../http/node-io';
import { guardedConnection } from '../http/connection-guard';
import { probeDeparture } from './departure-probe';
import type { LockServiceRoute } from './routes';
import { acquireWait, stoppedByDrain, type AcquireWait } from './replica-stopping';

/** One lock-service request, whichever connection it came on (Node's HTTP server or the lean one). */
export interface LockServiceCall {
  route: Exclude<LockServiceRoute, { kind: 'wrong-method' }>;
  headers: HeaderReader;
  /** `address:port` of the socket the request came in on (the CSRF check's origin fallback). */
  local: string;
  /** The JSON body; read only once authentication and the path passed. */
  body(): Promise<unknown>;
  /** A signal that aborts when the client goes away (asked for only by an acquire, which can wait). */
  gone(): AbortSignal;
}

export interface LockServiceAnswer {
  status: number;
  body: unknown;
  headers: Record<string, string>;
  /** Was the body read (an answer before that must close the connection, the body still unread)? */
  bodyRead: boolean;
  /** Did a principal allowed to lock authenticate (the connection then counts as authenticated)? */
  authenticated: boolean;
}

/**
 * The lock service: acquire, extend and release of locks, semaphore permits and read-write locks, answered before Next.js (scripts/console-server.ts
 * routes them here, through the lean connection or Node's request). The same checks in the same
 * order as every Next.js route (lib/server/http/route.ts): authenticate (API key, or a session and
 * its CSRF proof), authorize (`lock`), the path, then the body against the zod schemas of lib/api,
 * and the same service functions and error mapper, so the answers are the same byte for byte
 * apart from the speed.
 *
 * A client that goes away while its acquire waits (`waitMs`) aborts the wait: the core stops
 * retrying, and a grant that lands anyway is released by the core (acquire's abort contract).
 * Returns null when there is nobody left to answer. The end of a drain aborts it the same way and
 * is answered 503 (replica-stopping.ts).
 */
export async function answerLockService(call: LockServiceCall): Promise<LockServiceAnswer | null> {
  const { route } = call;
  let bodyRead = false;
  let authenticated = false;
  let wait: AcquireWait | null = null;
  /** The signal an acquire waits on: its client leaving, or this replica's drain ending. */
  const waitSignal = () => {
    wait = acquireWait(call.gone());
    return wait.signal;
  };
  try {
    const principal = await authenticate({ headers: call.headers });
    authorize(principal, 'lock');
    checkSessionCsrf(principal, 'POST', call.headers, call.local);
    authenticated = true;
    if (route.kind === 'bad-path') throw badRequest(route.message);
    const params =
      'resource' in route ? (parseInput(resourceParamsSchema, { resource: route.resource }, 'path') as { resource: string }) : null;
    const raw = await call.body();
    bodyRead = true;
    let result: unknown;
    switch (route.kind) {
      case 'acquire': {
        const body = parseInput(acquireBodySchema, raw, 'body') as z.infer<typeof acquireBodySchema>;
        // Only an acquire can wait (waitMs): its signal ends the wait when the client goes away.
        result = await acquireLock(principal, { ...body, resources: body.resources ?? [body.resource!] }, waitSignal());
        break;
      }
      case 'extend':
        result = await extendLock(
          principal,
          params!.resource,
          parseInput(extendBodySchema, raw, 'body') as z.infer<typeof extendBodySchema>,
        );
        break;
      case 'release':
        result = await releaseLock(
          principal,
          params!.resource,
          parseInput(releaseBodySchema, raw, 'body') as z.infer<typeof releaseBodySchema>,
        );
        break;
      case 'semaphore-acquire': {
        const body = parseInput(semaphoreAcquireBodySchema, raw, 'body') as z.infer<typeof semaphoreAcquireBodySchema>;
        result = await acquirePermit(principal, body, waitSignal());
        break;
      }
      case 'rw-read':
      case 'rw-write': {
        const body = parseInput(rwAcquireBodySchema, raw, 'body') as z.infer<typeof rwAcquireBodySchema>;
        result = await acquireRwLock(principal, params!.resource, route.kind === 'rw-read' ? 'read' : 'write', body, waitSignal());
        break;
      }
      case 'semaphore-extend':
      case 'rw-extend': {
        const body = parseInput(slotsExtendBodySchema, raw, 'body') as z.infer<typeof slotsExtendBodySchema>;
        result = await extendSlots(principal, route.kind === 'rw-extend' ? 'rwlock' : 'semaphore', params!.resource, body);
        break;
      }
      case 'semaphore-release':
      case 'rw-release': {
        const body = parseInput(slotsReleaseBodySchema, raw, 'body') as z.infer<typeof slotsReleaseBodySchema>;
        result = await releaseSlots(principal, route.kind === 'rw-release' ? 'rwlock' : 'semaphore', params!.resource, body);
        break;
      }
    }
    return { status: 200, body: result, headers: {}, bodyRead, authenticated };
  } catch (err) {
    const waited = wait as AcquireWait | null;
    if (waited?.stoppedByDrain()) {
      const parts = errorParts(stoppedByDrain());
      return { ...parts, headers: { ...parts.headers, 'retry-after': '1', connection: 'close' }, bodyRead, authenticated };
    }
    // Nobody to answer (the client went away): nothing to send, nothing to log.
    if (waited?.signal.aborted) return null;
    return { ...errorParts(err), bodyRead, authenticated };
  } finally {
    (wait as AcquireWait | null)?.done();
  }
}

/** The lock service on Node's request and response (a connection the lean reader handed to Node). */
export async function serveLockService(req: IncomingMessage, res: ServerResponse, route: LockServiceRoute): Promise<void> {
  if (route.kind === 'wrong-method') {
    if (route.method === 'OPTIONS')
      return void res.writeHead(204, [...API_SECURITY_HEADERS, ...hstsFor(req), 'Allow', 'OPTIONS, POST']).end();
    const error = { error: { code: 'METHOD_NOT_ALLOWED', message: `${route.method} is not allowed here; send POST` } };
    return sendJson(req, res, 405, error, { allow: 'OPTIONS, POST', ...(req.complete ? {} : { connection: 'close' }) });
  }
  const headers = headerReader(req);
  let gone: AbortController | null = null;
  const onClose = () => {
    if (!res.writableFinished) gone?.abort(new Error('the HTTP client went away'));
  };
  // A FIN while the acquire waits: the client may have half-closed or gone (departure-probe.ts).
  const probe: { stop: (() => void) | null } = { stop: null };
  const onEnd = () => {
    probe.stop ??= probeDeparture(() => {
      if (!res.headersSent && !res.destroyed) res.writeContinue();
    });
  };
  try {
    const answer = await answerLockService({
      route,
      headers,
      local: `${req.socket.localAddress ?? ''}:${req.socket.localPort ?? ''}`,
      body: () => readJsonBody(req, headers),
      gone: () => {
        gone = new AbortController();
        res.once('close', onClose);
        if (req.socket.readableEnded) onEnd();
        else req.socket.once('end', onEnd);
        return gone.signal;
      },
    });
    probe.stop?.();
    if (answer?.authenticated) guardedConnection(req.socket)?.markAuthenticated();
    if (!answer || res.destroyed) return;
    // A body left unread (refused before it was read) would otherwise be read to the end to keep
    // the connection: refuse it with the connection instead.
    const closing = answer.status !== 200 && !answer.bodyRead && !req.complete;
    sendJson(req, res, answer.status, answer.body, closing ? { ...answer.headers, connection: 'close' } : answer.headers);
  } finally {
    probe.stop?.();
    res.off('close', onClose);
    req.socket?.off('end', onEnd);
  }
}
