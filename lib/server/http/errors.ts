import type { ApiErrorCode } from '../../api/common';

/** An error with an HTTP status that the route wrapper answers as `{ error: { code, message } }`. */
export class HttpError extends Error {
  override readonly name = 'HttpError' as const;
  constructor(
    readonly status: number,
    readonly code: ApiErrorCode,
    message: string,
    readonly details?: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const badRequest = (message: string, details?: unknown) => new HttpError(400, 'BAD_REQUEST', message, details);
export const unauthorized = (message = 'sign in first, or send an API key as Authorization: Bearer <key>') =>
  new HttpError(401, 'UNAUTHORIZED', message);
export const forbidden = (message: string) => new HttpError(403, 'FORBIDDEN', message);
export const notFound = (message: string) => new HttpError(404, 'NOT_FOUND', message);
export const conflict = (message: string, details?: unknown) => new HttpError(409, 'CONFLICT', message, details);
export const tooMany = (message: string, retryAfterSeconds: number) =>
  new HttpError(429, 'TOO_MANY_REQUESTS', message, undefined, { 'retry-after': String(retryAfterSeconds) });
export const unavailable = (message: string, details?: unknown) => new HttpError(503, 'UNAVAILABLE', message, details);
