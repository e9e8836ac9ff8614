import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface OperatorLogin {
  username: string;
  password: string;
  /** 'env' when given by REDLOCK_ADMIN_USER/PASSWORD, 'generated' when kept under the data dir. */
  source: 'env' | 'generated';
}

export function credentialsFile(dataDir: string): string {
  return join(dataDir, 'operator.json');
}

/**
 * The operator login: from the environment when given, else generated on first run and kept in
 * `<dataDir>/operator.json` (mode 0600) so it survives restarts and can be printed at each start.
 */
export function ensureOperatorLogin(dataDir: string, fromEnv: { user: string | null; password: string | null }): OperatorLogin {
  if (fromEnv.user && fromEnv.password) return { username: fromEnv.user, password: fromEnv.password, source: 'env' };
  const file = credentialsFile(dataDir);
  try {
    const stored = JSON.parse(readFileSync(file, 'utf8')) as Partial<OperatorLogin>;
    if (typeof stored.username === 'string' && typeof stored.password === 'string' && stored.password.length >= 12) {
      chmodSync(file, 0o600);
      return { username: stored.username, password: stored.password, source: 'generated' };
    }
  } catch {
    // first run: generate below
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const login: OperatorLogin = { username: 'operator', password: randomBytes(15).toString('base64url'), source: 'generated' };
  writeFileSync(file, `${JSON.stringify({ username: login.username, password: login.password }, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return login;
}
