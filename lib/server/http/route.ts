import 'server-only';
import { z } from 'zod';
import { authenticate } from '../auth';
import { sameSecret } from '../auth/passwords';
import { allows, type Permission, type Principal } from '../auth/principal';
import { badRequest, forbidden, HttpError, unauthorized } from './errors';
import { errorResponse, json } from './error-response';
import { zodMessage } from './zod-message';

const MAX_BODY_BYTES = 64 * 1024;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

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
      if (!allows(principal, spec.permission)) {
        throw principal.kind === 'anonymous' ? unauthorized() : forbidden(`the ${roleName(principal)} role may not do this`);
      }
      if (principal.kind === 'session' && !SAFE_METHODS.has(req.method)) checkCsrf(req, principal.csrf);
      const params = parse(spec.params, decodeParams(await context?.params), 'path');
      const query = parse(spec.query, Object.fromEntries(new URL(req.url).searchParams), 'query');
      const body = spec.body ? parse(spec.body, await readJson(req), 'body') : undefined;
      const result = await handler({ req, principal, params, query, body } as RouteContext<z.infer<P>, z.infer<Q>, z.infer<B>>);
      return result instanceof Response ? result : json(200, result);
    } catch (err) {
      return errorResponse(err);
    }
  };
}

function roleName(principal: Principal): string {
  return principal.kind === 'session' || principal.kind === 'api-key' ? principal.role : principal.kind;
}

/** Cookie sessions must prove the request came from the console itself: same Origin and the CSRF token (compared in constant time). */
export function checkCsrf(req: Request, csrf: string): void {
  const origin = req.headers.get('origin');
  if (origin) {
    const host = req.headers.get('x-forwarded-host') ?? req.headers.get('host') ?? new URL(req.url).host;
    let originHost: string | null = null;
    try {
      originHost = new URL(origin).host;
    } catch {
      // malformed Origin: refused below
    }
    if (originHost !== host) throw new HttpError(403, 'CSRF', `cross-origin request refused (Origin ${origin})`);
  }
  if (!sameSecret(req.headers.get('x-csrf-token'), csrf)) {
    throw new HttpError(403, 'CSRF', 'missing or wrong x-csrf-token header (read it from GET /api/auth/me)');
  }
}

function parse<S extends z.ZodType>(schema: S | undefined, value: unknown, where: string): unknown {
  if (!schema) return value;
  const result = schema.safeParse(value);
  if (!result.success) throw badRequest(zodMessage(result.error, where), { issues: result.error.issues });
  return result.data;
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
  const type = req.headers.get('content-type') ?? '';
  if (!/^application\/json\b/i.test(type))
    throw new HttpError(415, 'UNSUPPORTED_MEDIA_TYPE', 'send the body as JSON (content-type: application/json)');
  const declared = Number(req.headers.get('content-length') ?? 0);
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  const text = new TextDecoder().decode(await readLimited(req.body, MAX_BODY_BYTES));
  if (!text.trim()) throw badRequest('the body is empty; send a JSON object');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw badRequest(`the body is not valid JSON: ${(err as Error).message}`);
  }
}

function tooLarge(): HttpError {
  return new HttpError(413, 'TOO_LARGE', `the body must be at most ${MAX_BODY_BYTES} bytes`, undefined, { connection: 'close' });
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
      if (total > limit) throw tooLarge();
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
  return Buffer.concat(chunks, total);
}
