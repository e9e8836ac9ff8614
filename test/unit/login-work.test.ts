import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';

/**
 * docs/security.md, login guessing: an unknown username must cost the same scrypt work as a known
 * one with a wrong password, or the time of a refusal tells which usernames exist. Counted, not
 * timed: every scrypt call is recorded with its parameters.
 */
const calls: Array<{ keylen: number; options: unknown }> = [];
vi.mock('node:crypto', async (importOriginal) => {
  const crypto = await importOriginal<typeof import('node:crypto')>();
  return {
    ...crypto,
    scrypt: (...args: Parameters<typeof crypto.scrypt>) => {
      calls.push({ keylen: args[2] as number, options: typeof args[3] === 'function' ? null : args[3] });
      return (crypto.scrypt as (...a: unknown[]) => void)(...args);
    },
  };
});

const dataDir = mkdtempSync(join(tmpdir(), 'login-work-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('login work', () => {
  it('an unknown username costs one scrypt of the same parameters as a wrong password for a known one', async () => {
    const { Accounts } = await import('../../lib/server/auth/accounts');
    const accounts = await Accounts.load(
      { REDLOCK_ADMIN_USER: 'op', REDLOCK_ADMIN_PASSWORD: 'operator-password-1' },
      dataDir,
      new Uint8Array(32).fill(7),
    );
    calls.length = 0;
    expect(await accounts.verifyLogin('op', 'wrong-password')).toBeNull();
    const known = calls.splice(0);
    expect(await accounts.verifyLogin('nobody-here', 'wrong-password')).toBeNull();
    const unknown = calls.splice(0);
    expect(known).toHaveLength(1);
    expect(unknown).toEqual(known);
    expect(await accounts.verifyLogin('op', 'operator-password-1')).toMatchObject({ username: 'op', role: 'operator' });
  });
});
