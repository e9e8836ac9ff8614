import 'server-only';
import type { LogoutResponse, Me } from '../api/auth';
import { getAuth, type HeaderReader } from './auth';
import type { Principal } from './auth/principal';
import { DEVICE_COOKIE, deviceCookie } from './auth/devices';
import { PasswordWorkBusy } from './auth/password-work';
import { readCookie, sessionCookie } from './auth/sessions';
import { recordAudit, recordFailedLogin } from './audit';
import { HttpError, tooMany, unauthorized } from './http/errors';
import { getRuntime } from './runtime';

/** What login and logout need of their request, whichever server read it (lib/server/auth-routes). */
export interface AuthRequest {
  headers: HeaderReader;
  /** The client's address (lib/server/http/client-address.ts: the TCP peer, or what a trusted proxy says). */
  address: string;
  /** Did it come over https (a TLS-terminating proxy says so: `X-Forwarded-Proto: https`)? The cookies are then `Secure`. */
  secure: boolean;
}

/** A successful answer of login or logout: its JSON body and the cookies it sets (one Set-Cookie each). */
export interface AuthAnswer<T> {
  body: T;
  cookies: string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Check the password, throttled (auth/login-throttle.ts): per address + username, or per trusted
 * device, and per address across usernames, each attempt counted before its password is checked;
 * a username under attack is slowed down for untrusted browsers, never locked. The check itself
 * runs within this process's password-work budget (auth/password-work.ts): past it, 429 with
 * Retry-After and no scrypt. Audit the attempt, set the session cookie and the device cookie.
 */
export async function login(req: AuthRequest, username: string, password: string): Promise<AuthAnswer<Me>> {
  const auth = await getAuth();
  const { address } = req;
  const device = await auth.devices.verify(readCookie(req.headers.get('cookie'), DEVICE_COOKIE));
  const trusted = device !== null && device.username === username;
  const attempt = trusted ? { scope: ['device', device.id], address: null } : { scope: ['address', address, username], address };
  const lane = trusted ? 'trusted' : 'other';
  // No room for password work now: refused before anything is counted or asked of the masters.
  const busy = auth.passwordWork.full(lane);
  if (busy) {
    await recordFailedLogin({ address, username, kind: 'refused' });
    throw tooMany(`the console is busy checking other logins; try again in ${busy.retryAfterS} s`, busy.retryAfterS);
  }
  const reservation = await auth.throttle.reserve(attempt, username);
  if (reservation.retryAfterS > 0) {
    await recordFailedLogin({ address, username, kind: 'refused' });
    throw tooMany(`too many failed logins; try again in ${reservation.retryAfterS} s`, reservation.retryAfterS);
  }
  if (!trusted && reservation.userFailures >= auth.throttle.limits.userThreshold) {
    const wait = await auth.throttle.turn(username);
    if (wait === null) {
      await auth.throttle.refund(attempt, reservation);
      await recordFailedLogin({ address, username, kind: 'refused' });
      throw tooMany(
        `this username is under attack: logins from new browsers are slowed down; try again in a few seconds`,
        Math.ceil(auth.throttle.limits.maxWaitMs / 1000),
      );
    }
    if (wait > 0) await sleep(wait);
  }
  let user: Awaited<ReturnType<typeof auth.accounts.verifyLogin>>;
  try {
    user = await auth.passwordWork.run(lane, () => auth.accounts.verifyLogin(username, password));
  } catch (err) {
    if (!(err instanceof PasswordWorkBusy)) throw err;
    await auth.throttle.refund(attempt, reservation);
    await recordFailedLogin({ address, username, kind: 'refused' });
    throw tooMany(`the console is busy checking other logins; try again in ${err.retryAfterS} s`, err.retryAfterS);
  }
  if (!user) {
    await auth.throttle.fail(trusted ? null : username);
    // Aggregated, in a stream of its own: anonymous traffic never pushes out the operators' history.
    await recordFailedLogin({ address, username, kind: 'failed' });
    throw unauthorized('wrong username or password');
  }
  await auth.throttle.succeed(attempt, reservation);
  const { token, claims } = await auth.sessions.issue(user);
  const deviceToken = await auth.devices.issue(user.username, trusted ? device.id : undefined);
  await recordAudit({ actor: user.username, role: user.role, action: 'login', target: user.username, outcome: 'ok', detail: address });
  const me: Me = {
    username: user.username,
    role: user.role,
    csrfToken: claims.csrf,
    sandbox: getRuntime().mode === 'sandbox',
    expiresAt: claims.expiresAt,
  };
  const { secure } = req;
  return {
    body: me,
    cookies: [
      sessionCookie(token, { secure, maxAgeSeconds: Math.floor((claims.expiresAt - Date.now()) / 1000) }),
      deviceCookie(deviceToken.token, { secure, maxAgeSeconds: deviceToken.maxAgeSeconds }),
    ],
  };
}

/**
 * Logout: the session is revoked on the masters (every console process, and this one after a
 * restart, refuses it from now on); `everywhere` ends every session of the user. The answer says
 * on how many masters the revocation was recorded.
 */
export async function logout(
  req: AuthRequest,
  principal: Principal,
  options: { everywhere?: boolean } = {},
): Promise<AuthAnswer<LogoutResponse>> {
  let recorded = { written: 0, failed: 0, majority: false };
  if (principal.kind === 'session') {
    const { sessions } = await getAuth();
    recorded = options.everywhere ? await sessions.revokeAll(principal.username) : await sessions.revoke(principal);
    await recordAudit({
      actor: principal.username,
      role: principal.role,
      action: options.everywhere ? 'logout.everywhere' : 'logout',
      target: principal.username,
      outcome: recorded.majority ? 'ok' : 'partial',
      detail: `revocation recorded on ${recorded.written} of ${recorded.written + recorded.failed} masters`,
    });
  }
  return {
    body: { ok: true, everywhere: options.everywhere === true, revokedOn: recorded.written },
    cookies: [sessionCookie('', { secure: req.secure, maxAgeSeconds: 0 })],
  };
}

export function me(principal: Principal): Me {
  if (principal.kind !== 'session') throw new HttpError(401, 'UNAUTHORIZED', 'not signed in');
  return {
    username: principal.username,
    role: principal.role,
    csrfToken: principal.csrf,
    sandbox: getRuntime().mode === 'sandbox',
    expiresAt: principal.expiresAt,
  };
}
