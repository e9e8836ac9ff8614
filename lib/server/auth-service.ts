import 'server-only';
import type { Me } from '../api/auth';
import { getAuth } from './auth';
import type { Principal } from './auth/principal';
import { sessionCookie } from './auth/sessions';
import { recordAudit } from './audit';
import { HttpError, tooMany, unauthorized } from './http/errors';
import { json } from './http/error-response';
import { getRuntime } from './runtime';

function clientAddress(req: Request): string {
  return req.headers.get('x-forwarded-for')?.split(',')[0]?.trim() || req.headers.get('x-real-ip') || 'local';
}

function isHttps(req: Request): boolean {
  return (req.headers.get('x-forwarded-proto') ?? new URL(req.url).protocol.replace(':', '')) === 'https';
}

/** Check the password (rate-limited per address + username), audit the attempt, set the session cookie. */
export async function login(req: Request, username: string, password: string): Promise<Response> {
  const auth = await getAuth();
  const key = `${clientAddress(req)}|${username}`;
  const wait = auth.limiter.retryAfter(key);
  if (wait > 0) throw tooMany(`too many failed logins; try again in ${wait} s`, wait);
  const user = await auth.accounts.verifyLogin(username, password);
  if (!user) {
    auth.limiter.fail(key);
    await recordAudit({ actor: username, role: 'anonymous', action: 'login.failed', target: username, outcome: 'denied', detail: clientAddress(req) });
    throw unauthorized('wrong username or password');
  }
  auth.limiter.succeed(key);
  const { token, claims } = await auth.sessions.issue(user);
  await recordAudit({ actor: user.username, role: user.role, action: 'login', target: user.username, outcome: 'ok', detail: clientAddress(req) });
  const me: Me = { username: user.username, role: user.role, csrfToken: claims.csrf, sandbox: getRuntime().mode === 'sandbox', expiresAt: claims.expiresAt };
  return json(200, me, { 'set-cookie': sessionCookie(token, { secure: isHttps(req), maxAgeSeconds: Math.floor((claims.expiresAt - Date.now()) / 1000) }) });
}

/**
 * Logout: the session is revoked on the masters (every console process, and this one after a
 * restart, refuses it from now on); `everywhere` ends every session of the user. The answer says
 * on how many masters the revocation was recorded.
 */
export async function logout(req: Request, principal: Principal, options: { everywhere?: boolean } = {}): Promise<Response> {
  let recorded = { written: 0, failed: 0, majority: false };
  if (principal.kind === 'session') {
    const { sessions } = await getAuth();
    recorded = options.everywhere ? await sessions.revokeAll(principal.username) : await sessions.revoke(principal);
    await recordAudit({
      actor: principal.username, role: principal.role, action: options.everywhere ? 'logout.everywhere' : 'logout', target: principal.username,
      outcome: recorded.majority ? 'ok' : 'partial', detail: `revocation recorded on ${recorded.written} of ${recorded.written + recorded.failed} masters`,
    });
  }
  return json(200, { ok: true, everywhere: options.everywhere === true, revokedOn: recorded.written },
    { 'set-cookie': sessionCookie('', { secure: isHttps(req), maxAgeSeconds: 0 }) });
}

export function me(principal: Principal): Me {
  if (principal.kind !== 'session') throw new HttpError(401, 'UNAUTHORIZED', 'not signed in');
  return { username: principal.username, role: principal.role, csrfToken: principal.csrf, sandbox: getRuntime().mode === 'sandbox', expiresAt: principal.expiresAt };
}
