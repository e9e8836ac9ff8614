import { describe, expect, it } from 'vitest';
import { LockContendedError } from '@redlock-console/redlock';
import { NodeActionError } from '../../lib/cluster/errors';
import { errorParts } from '../../lib/server/http/error-response';
import { notFound } from '../../lib/server/http/errors';
import { withoutHolder } from '../../lib/server/lock-service/operations';

/**
 * The console's process loads lib/server once (Next.js's route handlers import the server's own
 * modules: scripts/support/node-copy-loader.mjs; test/integration/one-copy.test.ts), so the
 * server tells errors apart by class. An error that merely carries a class's name is not that
 * class: a bug, answered 500 and logged, never a 4xx it did not earn.
 */
describe('errors by class', () => {
  it("a lock core's refusal loses its holder's name for a principal that may not read locks", () => {
    const err = new LockContendedError('acquire "a": held by another client "billing-7"', [{ node: 1 }] as never, ['a'], {
      owner: 'billing-7',
    });
    const redacted = withoutHolder(err) as { message: string; holder: unknown };
    expect(redacted.message).not.toContain('billing-7');
    expect(redacted.holder).toBeNull();
    expect(errorParts(redacted).status).toBe(409);
  });

  it("the route errors are mapped by their class; an error named like one is a 500 that says nothing of the name's status", () => {
    expect(errorParts(notFound('no such lock')).status).toBe(404);
    expect(errorParts(new NodeActionError('node 2 is not paused', 'BAD_STATE')).status).toBe(409);
    const namedLikeHttp = Object.assign(new Error('no such lock'), { name: 'HttpError', status: 404, code: 'NOT_FOUND' });
    const namedLikeNode = Object.assign(new Error('node 2 is not paused'), { name: 'NodeActionError', code: 'BAD_STATE' });
    for (const err of [namedLikeHttp, namedLikeNode]) {
      const parts = errorParts(err);
      expect(parts.status, err.name).toBe(500);
      expect(parts.body.error.code).toBe('INTERNAL');
    }
  });
});
