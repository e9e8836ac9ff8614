import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOGIN_LIMITS } from '../../lib/server/auth/login-throttle';
import { USERS, startApi, startLockServiceServer, type ApiHarness, type LockServiceServer } from '../support/api';

/**
 * POST /api/auth/login and /api/auth/logout answered on Node's request and response before Next.js
 * (lib/server/auth-routes), as the console's server does (a flood of refused logins
 * through Next.js took the event loop the lock service answers on). What a Next.js route gave and
 * this path must give too: the cookies and their flags, the API's headers, the method, content-type
 * and body rules, the CSRF proof of sign-out, and the client's address from the socket for the
 * login limits. (The limits themselves: security-login.test.ts; the body limits:
 * security-body.test.ts; who may call: api-authz.test.ts; the flood: security-login-flood.test.ts.)
 */

let api: ApiHarness;
let server: LockServiceServer;
beforeAll(async () => {
  api = await startApi({ nodes: 3 });
  server = await startLockServiceServer();
});
afterAll(async () => {
  await server?.close();
  await api?.stop();
});

const SECURITY = {
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
};

const login = (headers: Record<string, string> = {}, body: unknown = USERS.operator) =>
  api.call('POST', '/api/auth/login', { body, headers });

/** A login from the client address `localAddress` (127.0.0.x: each is another peer on loopback) over a socket of its own. */
function loginFrom(localAddress: string, username: string): Promise<{ status: number; retryAfter: string | undefined }> {
  const payload = JSON.stringify({ username, password: 'not-the-password' });
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: server.port,
        localAddress,
        path: '/api/auth/login',
        method: 'POST',
        agent: false,
        headers: { host: 'console.test', 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

describe('sign-in and sign-out before Next.js', () => {
  it('a login sets the session and device cookies with their flags, with the API headers and no-store; the session works', async () => {
    const res = await login();
    expect(res.status, await res.clone().text()).toBe(200);
    const [session, device, ...more] = res.headers.getSetCookie();
    expect(more).toEqual([]);
    expect(session).toMatch(/^rl_session=[^;]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
    expect(device).toMatch(/^rl_device=[^;]+; Path=\/api\/auth\/login; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(Object.fromEntries(Object.keys(SECURITY).map((h) => [h, res.headers.get(h)]))).toEqual(SECURITY);
    expect(res.headers.get('strict-transport-security')).toBeNull();
    const me = (await res.json()) as { username: string; role: string; csrfToken: string };
    expect(me).toMatchObject({ username: USERS.operator.username, role: 'operator' });
    const check = await api.call('GET', '/api/auth/me', { headers: { cookie: session!.split(';')[0]! } });
    expect(check.status).toBe(200);

    // Behind a TLS-terminating proxy: Secure cookies and HSTS.
    const https = await login({ 'x-forwarded-proto': 'https' });
    expect(https.status).toBe(200);
    expect(https.headers.getSetCookie().every((c) => c.endsWith('; Secure'))).toBe(true);
    expect(https.headers.get('strict-transport-security')).toContain('max-age=31536000');
  });

  it('answers the method, content-type and body rules as the Next.js route did', async () => {
    const get = await server.send('GET', '/api/auth/login', {});
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('OPTIONS, POST');
    const options = await server.send('OPTIONS', '/api/auth/logout', {});
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')).toBe('OPTIONS, POST');

    const text = await server.send('POST', '/api/auth/login', { 'content-type': 'text/plain' }, JSON.stringify(USERS.operator));
    expect(text.status).toBe(415);
    const cases: Array<[string, RegExp]> = [
      ['{"username":"op"}', /password/],
      [JSON.stringify({ ...USERS.operator, admin: true }), /admin/],
      ['{"username":', /not valid JSON/],
      ['', /empty/],
    ];
    for (const [body, message] of cases) {
      const res = await server.send('POST', '/api/auth/login', { 'content-type': 'application/json' }, body);
      expect(res.status, body).toBe(400);
      const error = ((await res.json()) as { error: { code: string; message: string } }).error;
      expect(error.code).toBe('BAD_REQUEST');
      expect(error.message, body).toMatch(message);
    }
  });

  it('a logout needs a session and its CSRF proof; it revokes the session and clears the cookie', async () => {
    const anonymous = await server.send('POST', '/api/auth/logout', { 'content-type': 'application/json' }, '{}');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('connection')).toBe('close');

    const res = await login();
    const cookie = res.headers.getSetCookie()[0]!.split(';')[0]!;
    const { csrfToken } = (await res.json()) as { csrfToken: string };
    const post = (headers: Record<string, string>) => api.call('POST', '/api/auth/logout', { body: {}, headers: { cookie, ...headers } });
    const noToken = await post({ origin: 'http://console.test' });
    expect(noToken.status).toBe(403);
    const crossOrigin = await post({ origin: 'https://evil.example', 'x-csrf-token': csrfToken });
    expect(crossOrigin.status).toBe(403);
    expect(((await crossOrigin.json()) as { error: { code: string } }).error.code).toBe('CSRF');
    expect((await api.call('GET', '/api/auth/me', { headers: { cookie } })).status).toBe(200); // not logged out by either

    const out = await post({ origin: 'http://console.test', 'x-csrf-token': csrfToken });
    expect(out.status).toBe(200);
    expect(await out.json()).toMatchObject({ ok: true, everywhere: false });
    expect(out.headers.getSetCookie()).toEqual(['rl_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0']);
    expect((await api.call('GET', '/api/auth/me', { headers: { cookie } })).status).toBe(401);
  });

  it("counts a login against its socket's peer address: one address is limited across usernames, another is not", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < LOGIN_LIMITS.addressAttempts; i++) statuses.push((await loginFrom('127.0.0.61', `peer-${i}`)).status);
    expect(statuses).toEqual(Array(LOGIN_LIMITS.addressAttempts).fill(401));
    const limited = await loginFrom('127.0.0.61', 'peer-last');
    expect(limited.status).toBe(429);
    expect(Number(limited.retryAfter)).toBeGreaterThan(0);
    expect((await loginFrom('127.0.0.62', 'peer-other')).status).toBe(401);
  }, 60_000);
});
