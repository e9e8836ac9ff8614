import { describe, expect, it } from 'vitest';
import { LockContendedError } from '@redlock-console/redlock';
import { errorParts } from '../../lib/server/http/error-response';
import { withoutHolder } from '../../lib/server/lock-service/operations';

/**
 * The console's server loads lib/ and the lock core twice (its own bundle for the lock service's
 * fast path, Next.js's copy for the other routes): an error made by one copy is not `instanceof`
 * the other copy's class. Everything that tests an error's class tests its name.
 */
class OtherCopyLockContendedError extends Error {
  override readonly name = 'LockContendedError';
  constructor(
    message: string,
    readonly votes: ReadonlyArray<{ node: number }>,
    readonly resources: readonly string[],
    readonly holder: Readonly<Record<string, string>> | null,
  ) {
    super(message);
  }
}

describe('errors from the other copy of the code', () => {
  it("a refusal from either copy loses its holder's name for a principal that may not read locks", () => {
    for (const Make of [LockContendedError, OtherCopyLockContendedError]) {
      const err = new Make('acquire "a": held by another client "billing-7"', [{ node: 1 }] as never, ['a'], { owner: 'billing-7' });
      const redacted = withoutHolder(err) as { message: string; holder: unknown };
      expect(redacted.message, Make.name).not.toContain('billing-7');
      expect(redacted.holder, Make.name).toBeNull();
      expect(errorParts(redacted).status).toBe(409);
    }
  });
});
