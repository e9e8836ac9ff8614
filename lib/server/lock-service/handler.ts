import 'server-only';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import { acquireBodySchema, extendBodySchema, releaseBodySchema, resourceParamsSchema } from '../../api/locks';
import { authenticate } from '../auth';
import { errorParts } from '../http/error-response';
import { badRequest } from '../http/errors';
import { authorize, checkSessionCsrf, parseInput } from '../http/request-checks';
import { acquireLock, extendLock, releaseLock } from '../locks-service';
import { headerReader, readJsonBody, sendJson } from './node-io';
import type { LockServiceRoute } from './routes';

/**
 * The lock service's fast path: acquire, extend and release answered on the Node request itself,
 * before Next.js (scripts/console-server.ts routes them here). The same checks in the same order
 * as every Next.js route (lib/server/http/route.ts): authenticate (API key, or a session and its
 * CSRF proof), authorize (`lock`), the path, then the body against the zod schemas of lib/api, and
 * the same service functions and error mapper, so the answers are the same byte for byte apart
 * from the speed.
 *
 * A client that goes away while its acquire waits (`waitMs`) aborts the wait: the core stops
 * retrying, and a grant that lands anyway is released by the core (acquire's abort contract).
 */
export async function serveLockService(req: IncomingMessage, res: ServerResponse, route: LockServiceRoute): Promise<void> {
  if (route.kind === 'wrong-method') {
    if (route.method === 'OPTIONS') return void res.writeHead(204, { allow: 'OPTIONS, POST' }).end();
    const error = { error: { code: 'METHOD_NOT_ALLOWED', message: `${route.method} is not allowed here; send POST` } };
    return sendJson(req, res, 405, error, { allow: 'OPTIONS, POST', ...(req.complete ? {} : { connection: 'close' }) });
  }
  let bodyRead = false;
  let gone: AbortController | null = null;
  const onClose = () => {
    if (!res.writableFinished) gone?.abort(new Error('the HTTP client went away'));
  };
  try {
    const headers = headerReader(req);
    const principal = await authenticate({ headers });
    authorize(principal, 'lock');
    checkSessionCsrf(principal, 'POST', headers, `${req.socket.localAddress ?? ''}:${req.socket.localPort ?? ''}`);
    if (route.kind === 'bad-path') throw badRequest(route.message);
    const params =
      route.kind === 'acquire' ? null : (parseInput(resourceParamsSchema, { resource: route.resource }, 'path') as { resource: string });
    const raw = await readJsonBody(req, headers);
    bodyRead = true;
    let result: unknown;
    if (route.kind === 'acquire') {
      const body = parseInput(acquireBodySchema, raw, 'body') as z.infer<typeof acquireBodySchema>;
      // Only an acquire can wait (waitMs): its signal ends the wait when the client goes away.
      gone = new AbortController();
      res.once('close', onClose);
      result = await acquireLock(principal, { ...body, resources: body.resources ?? [body.resource!] }, gone.signal);
    } else if (route.kind === 'extend') {
      result = await extendLock(principal, params!.resource, parseInput(extendBodySchema, raw, 'body') as z.infer<typeof extendBodySchema>);
    } else {
      result = await releaseLock(
        principal,
        params!.resource,
        parseInput(releaseBodySchema, raw, 'body') as z.infer<typeof releaseBodySchema>,
      );
    }
    sendJson(req, res, 200, result);
  } catch (err) {
    // Nobody to answer (the client went away): nothing to send, nothing to log.
    if (res.destroyed || gone?.signal.aborted) return;
    const { status, body, headers } = errorParts(err);
    // A body left unread (refused before it was read) would otherwise be read to the end to keep
    // the connection: refuse it with the connection instead.
    sendJson(req, res, status, body, bodyRead || req.complete ? headers : { ...headers, connection: 'close' });
  } finally {
    res.off('close', onClose);
  }
}
