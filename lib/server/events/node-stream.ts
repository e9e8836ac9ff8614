import 'server-only';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { eventsQuerySchema } from '../../api/events';
import { authenticate } from '../auth';
import { errorParts } from '../http/error-response';
import { API_SECURITY_HEADERS, headerReader, hstsFor, sendJson } from '../http/node-io';
import { authorize, checkSessionCsrf, parseInput } from '../http/request-checks';
import { logger } from '../logger';
import { openEventFeed } from './feed';
import { matchEventStream } from './stream-route';

const STREAM_HEADERS: readonly string[] = Object.freeze([
  ...API_SECURITY_HEADERS,
  'Content-Type',
  'text/event-stream; charset=utf-8',
  'Cache-Control',
  'no-store, no-transform',
  'Connection',
  'keep-alive',
  // nginx and the like: pass each chunk on as it comes.
  'X-Accel-Buffering',
  'no',
]);

/**
 * GET /api/events, server-sent events (feed.ts), answered on Node's request and response before
 * Next.js (scripts/console-server.ts), with the same checks in the same order as every Next.js
 * route (lib/server/http/route.ts): authenticate, authorize (`read`), the query against
 * lib/api's schema, one error mapper.
 *
 * Why not a Next.js route handler: its response body is a web ReadableStream that Next.js pipes to
 * the socket, a few promises and a copy per chunk. Every open stream gets a chunk every
 * STREAM_BATCH_MS under load (hub.ts), and with 200 streams open that piping was a tenth of what
 * the lock service could do on the same cores. Here a chunk is one `write` per stream.
 *
 * Returns false (Next.js answers) when the request is not for the event stream.
 */
export function serveIfEventStream(req: IncomingMessage, res: ServerResponse): boolean {
  if (!matchEventStream(req.url)) return false;
  if (req.method === 'GET') {
    serveEventStream(req, res).catch((err: unknown) => {
      // A fault of ours (the hub, its sources), never the client's: logged; the stream, if open, ends.
      logger().error({ err }, 'the event stream failed');
      if (!res.headersSent) {
        const { status, body, headers } = errorParts(err);
        sendJson(req, res, status, body, headers);
      } else res.destroy();
    });
  } else if (req.method === 'OPTIONS') res.writeHead(204, [...API_SECURITY_HEADERS, ...hstsFor(req), 'Allow', 'OPTIONS, GET']).end();
  else {
    const error = { error: { code: 'METHOD_NOT_ALLOWED', message: `${req.method} is not allowed here; send GET` } };
    sendJson(req, res, 405, error, { allow: 'OPTIONS, GET', ...(req.complete ? {} : { connection: 'close' }) });
  }
  return true;
}

async function serveEventStream(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const headers = headerReader(req);
  let query: { resource?: string };
  let principal: Awaited<ReturnType<typeof authenticate>>;
  try {
    principal = await authenticate({ headers });
    authorize(principal, 'read');
    checkSessionCsrf(principal, 'GET', headers, `${req.socket.localAddress ?? ''}:${req.socket.localPort ?? ''}`);
    const search = new URL(req.url!, 'http://console').searchParams;
    query = parseInput(eventsQuerySchema, Object.fromEntries(search), 'query') as { resource?: string };
  } catch (err) {
    const { status, body, headers: extra } = errorParts(err);
    return sendJson(req, res, status, body, extra);
  }
  if (res.destroyed) return;
  res.writeHead(200, [...STREAM_HEADERS, ...hstsFor(req)]);
  // The status and headers now, not with the first event: the client knows the stream is open.
  res.flushHeaders();
  const close = openEventFeed(principal, query.resource, {
    write: (bytes) => void res.write(bytes),
    queued: () => res.writableLength,
    end: (last) => (last ? res.end(last) : res.end()),
  });
  res.once('close', close);
}
