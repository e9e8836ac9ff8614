import 'server-only';
import { join } from 'node:path';
import { ensureSecretFile } from '../../cluster/secret';
import { Accounts } from './accounts';
import { SESSION_COOKIE, Sessions, readCookie } from './sessions';
import { LoginLimiter } from './rate-limit';
import type { Principal } from './principal';
import { unauthorized } from '../http/errors';

export interface Auth { accounts: Accounts; sessions: Sessions; limiter: LoginLimiter }

const KEY = Symbol.for('redlock-console.auth');
type Holder = { [KEY]?: Promise<Auth> };

/** The one auth context of this server process (kept across dev reloads like the runtime). */
export function getAuth(): Promise<Auth> {
  const holder = globalThis as Holder;
  holder[KEY] ??= createAuth(process.env).catch((err: unknown) => {
    delete holder[KEY];
    throw err;
  });
  return holder[KEY];
}

async function createAuth(env: Record<string, string | undefined>): Promise<Auth> {
  const dataDir = env.REDLOCK_DATA_DIR || join(process.cwd(), '.data');
  const secret = env.REDLOCK_SESSION_SECRET || ensureSecretFile(join(dataDir, 'session.secret'));
  return {
    accounts: await Accounts.load(env, dataDir),
    sessions: new Sessions(new TextEncoder().encode(secret)),
    limiter: new LoginLimiter(),
  };
}

/** Who sent this request: an API key or scrape token (Authorization: Bearer), a session cookie, or nobody. */
export async function authenticate(req: Request): Promise<Principal> {
  const auth = await getAuth();
  const header = req.headers.get('authorization');
  if (header) {
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match) throw unauthorized('the Authorization header must be "Bearer <api key>"');
    const name = auth.accounts.apiKey(match[1]!);
    if (name) return { kind: 'api-key', username: name, role: 'client' };
    if (auth.accounts.isMetricsToken(match[1]!)) return { kind: 'metrics-token', username: 'metrics' };
    throw unauthorized('unknown API key');
  }
  const token = readCookie(req.headers.get('cookie'), SESSION_COOKIE);
  if (token) {
    const claims = await auth.sessions.verify(token);
    // The role is read again from configuration: demoting a user takes effect on the next request.
    const role = claims ? auth.accounts.roleOf(claims.username) : null;
    if (claims && role) return { kind: 'session', ...claims, role };
  }
  return { kind: 'anonymous' };
}
