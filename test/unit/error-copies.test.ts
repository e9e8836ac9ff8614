import { describe, expect, it, vi } from 'vitest';
import { LockContendedError } from '@redlock-console/redlock';
import { NodeActionError } from '../../lib/cluster/errors';
import { errorParts } from '../../lib/server/http/error-response';
import { notFound } from '../../lib/server/http/errors';
import { withoutHolder } from '../../lib/server/lock-service/operations';

/**
 * The console's process loads lib/server once (Next.js's route handlers import the server's own
 * modules: scripts/support/node-copy-loader.mjs; test/integration/one-copy.test.ts), so the
 * server tells errors apart by class. An error that merely carries a class's name is not that
 * class: a bug, answered 500 and logged, never a 4xx it did not earn. The lock core's errors are the
 * exception the package makes for its users: a process may hold two copies of it (its ESM and CJS
 * builds), so they are told by the package's brand and the name it fixes (isRedlockError), and the
 * holder's redaction for API keys recognises a refusal by the same rule as the mapper.
 */

/** The lock core's LockContendedError from a second evaluation of the package: another class, the same brand. */
async function otherCopysRefusal(): Promise<Error & { holder: unknown }> {
  vi.resetModules();
  const other = (await import('@redlock-console/redlock')) as { LockContendedError: typeof LockContendedError };
  expect(other.LockContendedError).not.toBe(LockContendedError);
  return new other.LockContendedError('acquire "a": held by another client "billing-7"', [{ node: 1 }] as never, ['a'], {
    owner: 'billing-7',
  });
}
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

  it("a refusal from another copy of the lock core is mapped 409 and loses its holder as this copy's does", async () => {
    const err = await otherCopysRefusal();
    expect(err instanceof LockContendedError).toBe(false);
    const answered = errorParts(err);
    expect(answered.status).toBe(409);
    expect(JSON.stringify(answered.body)).toContain('billing-7'); // a console session is told who holds it
    const redacted = errorParts(withoutHolder(err));
    expect(redacted.status).toBe(409);
    expect(redacted.body.error.code).toBe('LOCK_CONTENDED');
    expect(JSON.stringify(redacted.body)).not.toContain('billing-7');
  });

  it("an error that only carries a lock core error's name is a 500, and its holder is not given out as a refusal's", () => {
    const namedLikeRefusal = Object.assign(new Error('acquire "a": held by another client "billing-7"'), {
      name: 'LockContendedError',
      votes: [],
      holder: { owner: 'billing-7' },
    });
    const parts = errorParts(withoutHolder(namedLikeRefusal));
    expect(parts.status).toBe(500);
    expect(JSON.stringify(parts.body)).not.toContain('billing-7');
  });
});
