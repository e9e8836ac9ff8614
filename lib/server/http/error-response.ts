import type { ApiErrorBody, ApiErrorCode } from '../../api/common';
import { NodeActionError } from '../../cluster/errors';
import { logger } from '../logger';
import { HttpError } from './errors';

/** Lock-core errors by their literal names (@redlock-console/redlock errors.ts), so this mapper needs no import cycle. */
const LOCK_ERRORS: Record<string, { status: number; code: ApiErrorCode }> = {
  LockContendedError: { status: 409, code: 'LOCK_CONTENDED' },
  QuorumUnavailableError: { status: 503, code: 'QUORUM_UNAVAILABLE' },
  LockExpiredError: { status: 409, code: 'LOCK_EXPIRED' },
  InvalidArgumentError: { status: 400, code: 'INVALID_ARGUMENT' },
};

/** The one error mapper of every route: 4xx for what the client can fix, 503 for quorum, 500 only for bugs. */
export function errorResponse(err: unknown): Response {
  if (err instanceof HttpError)
    return json(err.status, { error: { code: err.code, message: err.message, details: err.details } }, err.headers);
  if (err instanceof NodeActionError) {
    const status = err.code === 'NOT_FOUND' ? 404 : err.code === 'BAD_ACTION' ? 400 : 409;
    return json(status, { error: { code: err.code, message: err.message } });
  }
  const name = (err as { name?: string } | null)?.name;
  const mapped = name ? LOCK_ERRORS[name] : undefined;
  if (mapped) {
    const { votes, holder } = err as { votes?: ReadonlyArray<{ node: number }>; holder?: Readonly<Record<string, string>> | null };
    // Nodes are numbered from 1, in the core's votes as everywhere in the API.
    const details: Record<string, unknown> | undefined = votes === undefined ? undefined : { votes: votes.map((v) => ({ ...v })) };
    // A contended acquire names the holder by its metadata (owner, host, pid, acquiredAt…), never by token.
    if (details && holder !== undefined) details.holder = holder;
    return json(mapped.status, { error: { code: mapped.code, message: (err as Error).message, details } });
  }
  logger().error({ err }, 'unhandled error in a route');
  return json(500, { error: { code: 'INTERNAL', message: 'internal error (logged on the server)' } });
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return Response.json(body as ApiErrorBody, { status, headers: { 'cache-control': 'no-store', ...headers } });
}
