import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureOperatorLogin } from '../../lib/config';

/** The generated operator password was printed in the start log on every start. */
describe('the generated operator login', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('says it was created only on the start that generated it, so npm start prints the password once', () => {
    const dir = mkdtempSync(join(tmpdir(), 'redlock-login-'));
    dirs.push(dir);
    const first = ensureOperatorLogin(dir, { user: null, password: null });
    expect(first).toMatchObject({ source: 'generated', created: true });
    const again = ensureOperatorLogin(dir, { user: null, password: null });
    expect(again).toMatchObject({ source: 'generated', created: false, password: first.password });
    expect(ensureOperatorLogin(dir, { user: 'ops', password: 'from-the-environment' })).toMatchObject({ source: 'env', created: false });
  });
});
