import 'server-only';
import type { z } from 'zod';
import { authenticate } from '../auth';
import type { Permission, Principal } from '../auth/principal';
import { bodyTooLarge, authorize, checkBodyHeaders, checkSessionCsrf, MAX_BODY_BYTES, parseInput, parseJsonBody } from './request-checks';
import { errorResponse, json } from './error-response';
import { noteAuthenticated } from './peer';

export interface RouteSpec<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> {
  permission: Permission;
  params?: P;
  query?: Q;
  body?: B;
}

export interface RouteContext<P, Q, B> {
  req: Request;
  principal: Principal;
  params: P;
  query: Q;
  body: B;
}

type NextContext = { params: Promise<Record<string, string | string[]>> };

/**
 * Wrap a route handler: authenticate, authorize, check CSRF for cookie mutations, parse params,
 * query and body with the zod schemas of lib/api (unknown fields are rejected by name), run the
 * handler, and map every error through one mapper. A handler returns a Response or a JSON value.
 */
export function route<P extends z.ZodType = z.ZodUnknown, Q extends z.ZodType = z.ZodUnknown, B extends z.ZodType = z.ZodUnknown>(
  spec: RouteSpec<P, Q, B>,
  handler: (ctx: RouteContext<z.infer<P>, z.infer<Q>, z.infer<B>>) => Promise<Response | unknown>,
) {
  return async (req: Request, context?: NextContext): Promise<Response> => {
    try {
      const principal = await authenticate(req);
      authorize(principal, spec.permission);
      checkSessionCsrf(principal, req.method, req.headers, new URL(req.url).host);
      if (principal.kind !== 'anonymous') noteAuthenticated(req);
      const params = parseInput(spec.params, decodeParams(await context?.params), 'path');
      const query = parseInput(spec.query, Object.fromEntries(new URL(req.url).searchParams), 'query');
      const body = spec.body ? parseInput(spec.body, await readJson(req), 'body') : undefined;
      const result = await handler({ req, principal, params, query, body } as RouteContext<z.infer<P>, z.infer<Q>, z.infer<B>>);
      return result instanceof Response ? result : json(200, result);
    } catch (err) {
      return errorResponse(err);
    }
  };
}

/** Next.js hands route handlers params already URL-decoded (once); only flatten catch-alls. */
function decodeParams(params: Record<string, string | string[]> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(params ?? {})) out[key] = Array.isArray(value) ? value.join('/') : value;
  return out;
}

/**
 * The JSON body, read as a stream and never more than MAX_BODY_BYTES of it: a declared
 * Content-Length over the limit is refused before a byte is read, and a chunked body is refused
 * as soon as it passes the limit, without reading the rest (the 413 closes the connection, so the
 * rest is never read at all). Nothing larger than the limit is ever held in memory.
 */
async function readJson(req: Request): Promise<unknown> {
  checkBodyHeaders(req.headers);
  return parseJsonBody(new TextDecoder().decode(await readLimited(req.body, MAX_BODY_BYTES)));
}

/** At most `limit` bytes of `body`; throws 413 at the first chunk past it and stops reading there. */
async function readLimited(body: ReadableStream<Uint8Array> | null, limit: number): Promise<Uint8Array> {
  if (!body) return new Uint8Array(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      // No cancel(): in the server that would destroy the socket before the 413 is written. Reading
      // simply stops; the answer says `connection: close`, and the connection goes with the rest.
      if (total > limit) throw bodyTooLarge();
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  return Buffer.concat(chunks, total);
}
