import { describe, expect, it } from 'vitest';
import {
  InvalidArgumentError,
  LockContendedError,
  LockExpiredError,
  MaxTtlMismatchError,
  QuorumUnavailableError,
  SemaphoreLimitMismatchError,
  type RedlockError,
} from '@redlock-console/redlock';
import { API_ERROR_CODES } from '../../lib/api/common';
import { NODE_ACTION_STATUS, NodeActionError } from '../../lib/cluster/errors';
import { errorParts } from '../../lib/server/http/error-response';

/**
 * MaxTtlMismatchError was missing from the HTTP error map (a string-keyed record) and
 * answered 500. The map is now typed over the core's RedlockErrorName (a new class does not
 * compile unmapped); this checks every class the core exports at run time too.
 */
const EVERY_CORE_ERROR: RedlockError[] = [
  new LockContendedError('held', [], ['r']),
  new QuorumUnavailableError('no quorum', [], ['r']),
  new LockExpiredError('expired', [], ['r']),
  new InvalidArgumentError('ttlMs', 'must be positive'),
  new MaxTtlMismatchError('ceiling 30000 recorded, 60000 here', [], ['r'], 30_000, 60_000),
  new SemaphoreLimitMismatchError('a holder was granted with limit 3, this client uses 5', [], ['sem:r:0'], 3, 5),
];

describe('the one map of errors to HTTP answers', () => {
  it.each(EVERY_CORE_ERROR.map((e) => [e.name, e] as const))('%s is a 4xx or 503 with a known code, never a 500', (_name, err) => {
    const { status, body } = errorParts(err);
    expect(status === 503 || (status >= 400 && status < 500)).toBe(true);
    expect(API_ERROR_CODES).toContain(body.error.code);
  });

  it('a ceiling mismatch is the console configuration against the cluster: 503 MAX_TTL_MISMATCH with the message', () => {
    const { status, body } = errorParts(EVERY_CORE_ERROR[4]);
    expect(status).toBe(503);
    expect(body.error).toMatchObject({ code: 'MAX_TTL_MISMATCH', message: 'ceiling 30000 recorded, 60000 here' });
  });

  it("a semaphore limit mismatch is the caller's to fix: 409 SEMAPHORE_LIMIT_MISMATCH naming both limits", () => {
    const { status, body } = errorParts(EVERY_CORE_ERROR[5]);
    expect(status).toBe(409);
    expect(body.error).toMatchObject({ code: 'SEMAPHORE_LIMIT_MISMATCH', details: { recordedLimit: 3, clientLimit: 5 } });
  });

  it('a name that only looks like a key of the map (toString, constructor) is not mistaken for a core error', () => {
    const odd = Object.assign(new Error('x'), { name: 'toString' });
    expect(errorParts(odd).status).toBe(500);
  });

  it('node action errors: one status table for the control channel and the API', () => {
    for (const [code, status] of Object.entries(NODE_ACTION_STATUS)) {
      expect(errorParts(new NodeActionError('m', code as keyof typeof NODE_ACTION_STATUS)).status).toBe(status);
    }
  });
});
