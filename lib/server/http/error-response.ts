import { isRedlockError, type RedlockErrorName } from '@redlock-console/redlock';
import type { ApiErrorBody, ApiErrorCode } from '../../api/common';
import { nodeActionAnswer, NodeActionError } from '../../cluster/errors';
import { logger } from '../logger';
import { HttpError } from './errors';

/**
 * Lock-core errors by their literal names (@redlock-console/redlock errors.ts: the package fixes
 * each class's name for its users, whose process may hold two copies of it, its ESM and CJS
 * builds; so this mapper needs no import of the classes, only their brand). Typed over the core's RedlockErrorName:
 * a new error class does not compile until it is mapped here. MaxTtlMismatchError is the console's own
 * configuration against the cluster's (its REDLOCK_MAX_TTL_MS is not the ceiling the masters
 * record): nothing the client can fix, so 503 with its own code. SemaphoreLimitMismatchError is
 * the caller's limit against a live holder's: 409 with its own code (details.recordedLimit).
 */
const LOCK_ERRORS: Record<RedlockErrorName, { status: number; code: ApiErrorCode }> = {
  LockContendedError: { status: 409, code: 'LOCK_CONTENDED' },
  QuorumUnavailableError: { status: 503, code: 'QUORUM_UNAVAILABLE' },
  LockExpiredError: { status: 409, code: 'LOCK_EXPIRED' },
  InvalidArgumentError: { status: 400, code: 'INVALID_ARGUMENT' },
  MaxTtlMismatchError: { status: 503, code: 'MAX_TTL_MISMATCH' },
  // Clients of one semaphore (or read-write lock) disagree on its limit (maxReaders): the
  // caller's request against a live holder's, which the caller can fix (use the same limit).
  SemaphoreLimitMismatchError: { status: 409, code: 'SEMAPHORE_LIMIT_MISMATCH' },
};

/**
 * A lock core's error, from this copy of the package or another: its brand (isRedlockError), then
 * the name the package fixes. An error that only carries one of those names is not one (a 500).
 * withoutHolder (lock-service/operations.ts) recognises a refusal by the same rule, so that the
 * holder is hidden from every refusal this mapper would answer with it.
 */
export function lockErrorOf(err: unknown): { status: number; code: ApiErrorCode } | undefined {
  if (!isRedlockError(err) || !Object.hasOwn(LOCK_ERRORS, err.name)) return undefined;
  return LOCK_ERRORS[err.name as RedlockErrorName];
}

/** An error answer before it becomes a Response: what both the Next.js routes and the lock service's fast path send. */
export interface ErrorParts {
  status: number;
  body: ApiErrorBody;
  headers: Record<string, string>;
}

/** The one error mapper of every route: 4xx for what the client can fix, 503 for quorum, 500 only for bugs. */
export function errorParts(err: unknown): ErrorParts {
  // By class: the console's process loads lib/ once (Next.js's route handlers import the server's
  // modules: scripts/support/node-copy-loader.mjs), so every HttpError is this module's HttpError.
  if (err instanceof HttpError)
    return {
      status: err.status,
      body: { error: { code: err.code, message: err.message, details: err.details } },
      headers: err.headers ?? {},
    };
  if (err instanceof NodeActionError) {
    return { ...nodeActionAnswer(err), headers: {} };
  }
  const mapped = lockErrorOf(err);
  if (mapped) {
    const { votes, holder } = err as { votes?: ReadonlyArray<{ node: number }>; holder?: Readonly<Record<string, string>> | null };
    // Nodes are numbered from 1, in the core's votes as everywhere in the API.
    const details: Record<string, unknown> | undefined = votes === undefined ? undefined : { votes: votes.map((v) => ({ ...v })) };
    // A contended acquire names the holder by its metadata (owner, host, pid, acquiredAt…), never by token.
    if (details && holder !== undefined) details.holder = holder;
    // A limit mismatch names the limit the holder recorded and the caller's (no holder identity).
    const { recordedLimit, clientLimit } = err as { recordedLimit?: number; clientLimit?: number };
    if (details && recordedLimit !== undefined) Object.assign(details, { recordedLimit, clientLimit });
    return { status: mapped.status, body: { error: { code: mapped.code, message: (err as Error).message, details } }, headers: {} };
  }
  logger().error({ err }, 'unhandled error in a route');
  return { status: 500, body: { error: { code: 'INTERNAL', message: 'internal error (logged on the server)' } }, headers: {} };
}

export function errorResponse(err: unknown): Response {
  const { status, body, headers } = errorParts(err);
  return json(status, body, headers);
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return Response.json(body as ApiErrorBody, { status, headers: { 'cache-control': 'no-store', ...headers } });
}
