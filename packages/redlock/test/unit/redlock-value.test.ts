import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, lockValue, metaTextOf, Redlock, tokenOf } from '@redlock-console/redlock';
import { newToken } from '../../src/token';

describe('the lock value `<token> <metadata>` (src/value.ts)', () => {
  it('joins and splits at the first space; a value without one is a bare token', () => {
    const value = lockValue('AbC_-12', '{"owner":"a b","note":"x y z"}');
    expect(value).toBe('AbC_-12 {"owner":"a b","note":"x y z"}');
    expect(tokenOf(value)).toBe('AbC_-12');
    expect(metaTextOf(value)).toBe('{"owner":"a b","note":"x y z"}');
    expect(lockValue('AbC_-12', '')).toBe('AbC_-12');
    expect(tokenOf('node-redlock-hex-0123')).toBe('node-redlock-hex-0123');
    expect(metaTextOf('node-redlock-hex-0123')).toBeNull();
  });

  it('our tokens never contain a space, and a token given from outside may not either', async () => {
    for (let i = 0; i < 1_000; i++) expect(newToken()).toMatch(/^[A-Za-z0-9_-]{27}$/);
    const r = new Redlock(['redis://127.0.0.1:1']); // never reached: the token is refused first
    try {
      await expect(r.releaseToken('x', 'abc def')).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(r.extendToken('x', 'abc ', 1_000)).rejects.toBeInstanceOf(InvalidArgumentError);
    } finally {
      await r.quit();
    }
  });
});
