import 'server-only';
import { createHmac } from 'node:crypto';
import { join } from 'node:path';
import { ensureSecretFile } from '../../cluster/secret';
import { Accounts } from './accounts';
import { SESSION_COOKIE, Sessions, readCookie } from './sessions';
import { Devices } from './devices';
import { LoginThrottle } from './login-throttle';
import { PasswordWork } from './password-work';
import { MastersRevocationStore } from './session-store';
import { installPeerStamp } from '../http/peer';
import type { Principal } from './principal';
import { unauthorized } from '../http/errors';

export interface Auth {
  accounts: Accounts;
  sessions: Sessions;
  throttle: LoginThrottle;
  /** The budget for scrypt in this process (auth/password-work.ts). */
  passwordWork: PasswordWork;
  devices: Devices;
  /** Keys the fingerprints viewers see instead of foreign values (inspect-service.ts). */
  fingerprintKey: Buffer;
}

let auth: Promise<Auth> | undefined;

/** The one auth context of this server process (made again by the next call if making it failed). */
export function getAuth(): Promise<Auth> {
  auth ??= createAuth(process.env).catch((err: unknown) => {
    auth = undefined;
    throw err;
  });
  return auth;
}

async function createAuth(env: Record<string, string | undefined>): Promise<Auth> {
  const dataDir = env.REDLOCK_DATA_DIR || join(process.cwd(), '.data');
  const secret = env.REDLOCK_SESSION_SECRET || ensureSecretFile(join(dataDir, 'session.secret'));
  const key = new TextEncoder().encode(secret);
  installPeerStamp(); // instrumentation.ts does it at start; this covers a server started without it
  const derive = (purpose: string) => createHmac('sha256', key).update(purpose).digest();
  return {
    // One secret, one key per purpose: the stamps are keyed apart from the session signatures.
    accounts: await Accounts.load(env, dataDir, derive('redlock-console credential stamp')),
    sessions: new Sessions(key, new MastersRevocationStore()),
    throttle: new LoginThrottle(),
    passwordWork: new PasswordWork(),
    devices: new Devices(derive('redlock-console device cookie')),
    fingerprintKey: derive('redlock-console value fingerprint'),
  };
}

/** The request headers authentication reads: a Web `Request`'s, or a Node request's through an adapter (lib/server/lock-service). */
export interface HeaderReader {
  get(name: string): string | null;
}

/** Who sent this request: an API key or scrape token (Authorization: Bearer), a session cookie, or nobody. */
export async function authenticate(req: { headers: HeaderReader }): Promise<Principal> {
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
    // The role is read again from configuration: demoting a user takes effect on the next request;
    // a changed password (another credential stamp) ends the sessions signed in with the old one.
    const role = claims ? auth.accounts.roleOf(claims.username) : null;
    if (claims && role && auth.accounts.stampOf(claims.username) === claims.stamp) return { kind: 'session', ...claims, role };
  }
  return { kind: 'anonymous' };
}
