import { LIMITS } from '@redlock-console/redlock/vocabulary';
import { z } from 'zod';

// The console's pages run under a CSP without eval (lib/server/http/security-headers.ts). Zod's
// JIT probes `new Function` on its first parse, which the browser reports as a CSP violation even
// though zod catches it: in the browser, parse without the JIT.
if (typeof window !== 'undefined') z.config({ jitless: true });

/**
 * Every `error.code` the API answers, by status: 400 BAD_REQUEST / INVALID_ARGUMENT / BAD_ACTION,
 * 401 UNAUTHORIZED, 403 FORBIDDEN / CSRF, 404 NOT_FOUND, 409 CONFLICT / LOCK_CONTENDED /
 * LOCK_EXPIRED / SEMAPHORE_LIMIT_MISMATCH / SENTINEL_CHANGED / NOT_SANDBOX / BAD_STATE / NO_PROXY, 405 METHOD_NOT_ALLOWED, 413 TOO_LARGE,
 * 415 UNSUPPORTED_MEDIA_TYPE, 429 TOO_MANY_REQUESTS, 503 QUORUM_UNAVAILABLE / MAX_TTL_MISMATCH /
 * NODE_UNREACHABLE / UNAVAILABLE, 500 INTERNAL (a bug, logged).
 */
export const API_ERROR_CODES = [
  'BAD_REQUEST',
  'INVALID_ARGUMENT',
  'BAD_ACTION',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'CSRF',
  'NOT_FOUND',
  'CONFLICT',
  'LOCK_CONTENDED',
  'LOCK_EXPIRED',
  'SEMAPHORE_LIMIT_MISMATCH',
  'SENTINEL_CHANGED',
  'NOT_SANDBOX',
  'BAD_STATE',
  'NO_PROXY',
  'METHOD_NOT_ALLOWED',
  'TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'TOO_MANY_REQUESTS',
  'QUORUM_UNAVAILABLE',
  'MAX_TTL_MISMATCH',
  'NODE_UNREACHABLE',
  'UNAVAILABLE',
  'INTERNAL',
] as const;
export type ApiErrorCode = (typeof API_ERROR_CODES)[number];

/** Every non-2xx answer of the API. */
export const apiErrorSchema = z.object({
  error: z.object({
    code: z.enum(API_ERROR_CODES),
    message: z.string(),
    details: z.unknown().optional(),
  }),
});
export type ApiErrorBody = z.infer<typeof apiErrorSchema>;

export const ROLES = ['viewer', 'operator', 'client'] as const;
export const roleSchema = z.enum(ROLES);
export type Role = z.infer<typeof roleSchema>;

/** A resource name as the lock core accepts it (validated again there). */
export const resourceSchema = z
  .string()
  .min(1, 'must not be empty')
  .refine((s) => new TextEncoder().encode(s).length <= LIMITS.maxResourceBytes, `must be at most ${LIMITS.maxResourceBytes} bytes (UTF-8)`);
