import 'server-only';
import type { z } from 'zod';
import type { HeaderReader } from '../auth';
import { sameSecret } from '../auth/passwords';
import { allows, type Permission, type Principal } from '../auth/principal';
import { badRequest, forbidden, HttpError, unauthorized } from './errors';
import { zodMessage } from './zod-message';

/**
 * What every API request goes through, whichever server answers it (the Next.js route wrapper in
 * route.ts, or the lock service's fast path in lib/server/lock-service): who may do what, the CSRF
 * proof of cookie sessions, the zod contract of lib/api, and the body rules. One owner, so the two
 * paths cannot drift apart.
 */

/** Request bodies larger than this are refused (413) before or while they are read, never held. */
export const MAX_BODY_BYTES = 64 * 1024;

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** 401 for nobody, 403 for a principal whose role may not; nothing for one that may. */
export function authorize(principal: Principal, permission: Permission): void {
  if (allows(principal, permission)) return;
  throw principal.kind === 'anonymous' ? unauthorized() : forbidden(`the ${roleName(principal)} role may not do this`);
}

function roleName(principal: Principal): string {
  return principal.kind === 'session' || principal.kind === 'api-key' ? principal.role : principal.kind;
}

/** A cookie session's unsafe request must carry its CSRF proof (see checkCsrf). */
export function checkSessionCsrf(principal: Principal, method: string, headers: HeaderReader, requestHost: string): void {
  if (principal.kind === 'session' && !SAFE_METHODS.has(method)) checkCsrf(headers, principal.csrf, requestHost);
}

/**
 * Cookie sessions must prove the request came from the console itself: same Origin and the CSRF
 * token (compared in constant time). `requestHost` is the host the request was addressed to when
 * no Host header says it.
 */
export function checkCsrf(headers: HeaderReader, csrf: string, requestHost: string): void {
  const origin = headers.get('origin');
  if (origin) {
    const host = headers.get('x-forwarded-host') ?? headers.get('host') ?? requestHost;
    let originHost: string | null = null;
    try {
      originHost = new URL(origin).host;
    } catch {
      // malformed Origin: refused below
    }
    if (originHost !== host) throw new HttpError(403, 'CSRF', `cross-origin request refused (Origin ${origin})`);
  }
  if (!sameSecret(headers.get('x-csrf-token'), csrf)) {
    throw new HttpError(403, 'CSRF', 'missing or wrong x-csrf-token header (read it from GET /api/auth/me)');
  }
}

/** `value` checked against a lib/api schema; 400 naming the field otherwise. No schema: the value as is. */
export function parseInput<S extends z.ZodType>(schema: S | undefined, value: unknown, where: string): unknown {
  if (!schema) return value;
  const result = schema.safeParse(value);
  if (!result.success) throw badRequest(zodMessage(result.error, where), { issues: result.error.issues });
  return result.data;
}

/** A body must be JSON, say so, and not say it is larger than the limit (checked before a byte is read). */
export function checkBodyHeaders(headers: HeaderReader): void {
  const type = headers.get('content-type') ?? '';
  if (!/^application\/json\b/i.test(type))
    throw new HttpError(415, 'UNSUPPORTED_MEDIA_TYPE', 'send the body as JSON (content-type: application/json)');
  const declared = Number(headers.get('content-length') ?? 0);
  if (declared > MAX_BODY_BYTES) throw bodyTooLarge();
}

/** The body's text as JSON; 400 for an empty or malformed one. */
export function parseJsonBody(text: string): unknown {
  if (!text.trim()) throw badRequest('the body is empty; send a JSON object');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw badRequest(`the body is not valid JSON: ${(err as Error).message}`);
  }
}

/** 413; the answer closes the connection, so the rest of the body is never read. */
export function bodyTooLarge(): HttpError {
  return new HttpError(413, 'TOO_LARGE', `the body must be at most ${MAX_BODY_BYTES} bytes`, undefined, { connection: 'close' });
}
