import type { ApiErrorCode } from './common';
import type { ApiRoute } from './routes';

/**
 * The error answers of every operation, by status and `error.code`, for the OpenAPI document
 * (openapi.ts). Most follow from a route's shape, as the route wrapper (lib/server/http/route.ts)
 * and the lock service's fast path check every request alike: input → 400, a caller who must sign
 * in → 401 and 403 (and the CSRF proof on a session's POST), a body → 413 and 415. What a handler
 * answers on its own is listed per operation in OPERATION_ERRORS; the lock core's errors by status
 * are lib/server/http/error-response.ts's (their codes are named here, the mapping stays there).
 * Every status's body is `ApiError` (common.ts), except where `sameAsOk` says the answer is the
 * operation's own schema (GET /api/ready answers its readiness with 503).
 */
export const ERROR_STATUSES = [400, 401, 403, 404, 409, 413, 415, 429, 503] as const;
export type ErrorStatus = (typeof ERROR_STATUSES)[number];

/** What a status means on any operation (the codes say which case). */
export const ERROR_STATUS_MEANING: Readonly<Record<ErrorStatus, string>> = Object.freeze({
  400: 'The request does not fit the contract; the message names the field',
  401: 'No credentials, or unknown ones',
  403: "The caller's role may not do this, or a session's request without its CSRF proof or from another origin",
  404: 'There is no such thing',
  409: 'The state of the lock, node or run does not allow it now',
  413: 'The body is larger than 64 KiB; the connection is closed',
  415: 'The body is not sent as application/json',
  429: 'Over a limit; try again after the Retry-After header (seconds)',
  503: 'Not enough masters answer, or this console is not set up for the cluster',
});

export interface ErrorAnswer {
  codes: readonly ApiErrorCode[];
  /** The answer's body is the operation's 200 schema, not ApiError. */
  sameAsOk?: true;
}

/** What handlers answer beyond the shape's checks, by `METHOD /path` (a test checks every key names a route). */
export const OPERATION_ERRORS: Readonly<Record<string, Partial<Record<ErrorStatus, ErrorAnswer>>>> = Object.freeze({
  'GET /api/ready': { 503: { codes: [], sameAsOk: true } },
  'POST /api/auth/login': { 401: { codes: ['UNAUTHORIZED'] }, 429: { codes: ['TOO_MANY_REQUESTS'] } },
  'POST /api/nodes/{id}/actions': {
    400: { codes: ['BAD_ACTION'] },
    404: { codes: ['NOT_FOUND'] },
    409: { codes: ['NOT_SANDBOX', 'BAD_STATE', 'NO_PROXY'] },
  },
  'POST /api/nodes/{id}/mark-clean': {
    404: { codes: ['NOT_FOUND'] },
    409: { codes: ['SENTINEL_CHANGED'] },
    503: { codes: ['NODE_UNREACHABLE'] },
  },
  // The scan budget of fresh reads and full scans (lib/server/scan-budget.ts).
  'GET /api/locks': { 429: { codes: ['TOO_MANY_REQUESTS'] } },
  // The lock core's errors (error-response.ts) and the API key's quotas (quotas/key-quotas.ts).
  'POST /api/locks': {
    400: { codes: ['INVALID_ARGUMENT'] },
    409: { codes: ['LOCK_CONTENDED'] },
    429: { codes: ['TOO_MANY_REQUESTS'] },
    // UNAVAILABLE: a lock-service replica shutting down stopped the waiting acquire (replica-stopping.ts).
    503: { codes: ['QUORUM_UNAVAILABLE', 'MAX_TTL_MISMATCH', 'UNAVAILABLE'] },
  },
  'POST /api/locks/{resource}/extend': {
    400: { codes: ['INVALID_ARGUMENT'] },
    409: { codes: ['LOCK_EXPIRED'] },
    503: { codes: ['QUORUM_UNAVAILABLE', 'MAX_TTL_MISMATCH'] },
  },
  // A release answers what every node did (200, released: false included); only bad input fails.
  'POST /api/locks/{resource}/release': { 400: { codes: ['INVALID_ARGUMENT'] } },
  // Semaphores and read-write locks: the mutex's errors, and a limit (maxReaders) another holder does not share.
  'POST /api/semaphores': {
    400: { codes: ['INVALID_ARGUMENT'] },
    409: { codes: ['LOCK_CONTENDED', 'SEMAPHORE_LIMIT_MISMATCH'] },
    429: { codes: ['TOO_MANY_REQUESTS'] },
    // UNAVAILABLE: a lock-service replica shutting down stopped the waiting acquire (replica-stopping.ts).
    503: { codes: ['QUORUM_UNAVAILABLE', 'MAX_TTL_MISMATCH', 'UNAVAILABLE'] },
  },
  'POST /api/semaphores/{resource}/extend': {
    400: { codes: ['INVALID_ARGUMENT'] },
    409: { codes: ['LOCK_EXPIRED'] },
    503: { codes: ['QUORUM_UNAVAILABLE', 'MAX_TTL_MISMATCH'] },
  },
  'POST /api/semaphores/{resource}/release': { 400: { codes: ['INVALID_ARGUMENT'] } },
  'POST /api/rwlocks/{resource}/read': {
    400: { codes: ['INVALID_ARGUMENT'] },
    409: { codes: ['LOCK_CONTENDED', 'SEMAPHORE_LIMIT_MISMATCH'] },
    429: { codes: ['TOO_MANY_REQUESTS'] },
    // UNAVAILABLE: a lock-service replica shutting down stopped the waiting acquire (replica-stopping.ts).
    503: { codes: ['QUORUM_UNAVAILABLE', 'MAX_TTL_MISMATCH', 'UNAVAILABLE'] },
  },
  'POST /api/rwlocks/{resource}/write': {
    400: { codes: ['INVALID_ARGUMENT'] },
    409: { codes: ['LOCK_CONTENDED', 'SEMAPHORE_LIMIT_MISMATCH'] },
    429: { codes: ['TOO_MANY_REQUESTS'] },
    // UNAVAILABLE: a lock-service replica shutting down stopped the waiting acquire (replica-stopping.ts).
    503: { codes: ['QUORUM_UNAVAILABLE', 'MAX_TTL_MISMATCH', 'UNAVAILABLE'] },
  },
  'POST /api/rwlocks/{resource}/extend': {
    400: { codes: ['INVALID_ARGUMENT'] },
    409: { codes: ['LOCK_EXPIRED'] },
    503: { codes: ['QUORUM_UNAVAILABLE', 'MAX_TTL_MISMATCH'] },
  },
  'POST /api/rwlocks/{resource}/release': { 400: { codes: ['INVALID_ARGUMENT'] } },
  // Written ahead: without the audit entry on a majority, nothing is deleted (force-release.ts).
  // A live holder without `confirmLiveHolder` is refused 409 before anything is written.
  'POST /api/locks/{resource}/force-release': { 409: { codes: ['CONFLICT'] }, 503: { codes: ['UNAVAILABLE'] } },
  'POST /api/force-release': { 409: { codes: ['CONFLICT'] }, 503: { codes: ['UNAVAILABLE'] } },
  'GET /api/scenarios/runs/current': { 404: { codes: ['NOT_FOUND'] } },
  'POST /api/scenarios/{id}/runs': { 404: { codes: ['NOT_FOUND'] }, 409: { codes: ['NOT_SANDBOX', 'CONFLICT'] } },
  'POST /api/scenarios/runs/current/{action}': { 404: { codes: ['NOT_FOUND'] }, 409: { codes: ['CONFLICT'] } },
  'GET /api/chaos/report': { 404: { codes: ['NOT_FOUND'] } },
});

/** Every error answer of one operation, by status (in ERROR_STATUSES order), with its codes. */
export function errorAnswersOf(route: ApiRoute): Partial<Record<ErrorStatus, ErrorAnswer>> {
  const out: Partial<Record<ErrorStatus, { codes: ApiErrorCode[]; sameAsOk?: true }>> = {};
  const add = (status: ErrorStatus, ...codes: ApiErrorCode[]) => {
    const answer = (out[status] ??= { codes: [] });
    for (const code of codes) if (!answer.codes.includes(code)) answer.codes.push(code);
  };
  if (route.params || route.query || route.body) add(400, 'BAD_REQUEST');
  if (route.access !== 'anyone') {
    add(401, 'UNAUTHORIZED');
    add(403, 'FORBIDDEN');
    // A cookie session's unsafe request needs its CSRF proof (request-checks.ts checkSessionCsrf).
    if (route.method === 'POST') add(403, 'CSRF');
  }
  if (route.body) {
    add(413, 'TOO_LARGE');
    add(415, 'UNSUPPORTED_MEDIA_TYPE');
  }
  for (const [status, answer] of Object.entries(OPERATION_ERRORS[`${route.method} ${route.path}`] ?? {})) {
    add(Number(status) as ErrorStatus, ...answer.codes);
    if (answer.sameAsOk) out[Number(status) as ErrorStatus]!.sameAsOk = true;
  }
  const ordered: Partial<Record<ErrorStatus, ErrorAnswer>> = {};
  for (const status of ERROR_STATUSES) if (out[status]) ordered[status] = out[status];
  return ordered;
}
