import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { peerStamp, PEER_HEADER } from '../../lib/server/http/peer';
import { LOGIN_LIMITS } from '../../lib/server/auth/login-throttle';
import { USERS, startApi, type ApiHarness } from '../support/api';
import { uniquePrefix } from '../support/cluster';
import { attachConsole, closeConsole, detachConsole, restartConsole } from '../support/console-process';

/**
 * The login limit cannot be bypassed by rotating X-Forwarded-For, and a
 * stranger's wrong passwords cannot lock the operator out. Requests carry the TCP peer the way the
 * server's socket stamps them (lib/server/http/peer.ts); the limits live on the masters.
 */

let api: ApiHarness;
beforeAll(async () => {
  api = await startApi({ nodes: 3 });
});
afterAll(async () => {
  await api?.stop();
});
beforeEach(async () => {
  // Each test starts from a clean slate: its own keys on the masters, a fresh console.
  process.env.REDLOCK_KEY_PREFIX = uniquePrefix('login');
  delete process.env.REDLOCK_TRUST_PROXY;
  await restartConsole();
});

const WRONG = { username: USERS.operator.username, password: 'not-the-password' };

/** A login from TCP peer `peer`, with the X-Forwarded-For the client sent (if any). */
function attempt(peer: string, credentials: { username: string; password: string }, options: { xff?: string; cookie?: string } = {}) {
  const headers: Record<string, string> = { [PEER_HEADER]: peerStamp(peer, options.xff ?? null) };
  if (options.xff) headers['x-forwarded-for'] = options.xff;
  if (options.cookie) headers.cookie = options.cookie;
  return api.call('POST', '/api/auth/login', { body: credentials, headers });
}

function deviceCookieOf(res: Response): string {
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith('rl_device='));
  expect(cookie).toBeTruthy();
  return cookie!.split(';')[0]!;
}

describe('login limits', () => {
  it('rotating X-Forwarded-For does not bypass the limit when the proxy is not trusted', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await attempt('203.0.113.9', WRONG, { xff: `10.9.${i}.${i + 1}` })).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    const limited = await attempt('203.0.113.9', WRONG, { xff: '172.16.0.1' });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('a trusted proxy (hop count or CIDR list) makes X-Forwarded-For name the client; an untrusted peer does not', async () => {
    process.env.REDLOCK_TRUST_PROXY = '1';
    for (let i = 0; i < 7; i++) expect((await attempt('10.0.0.2', WRONG, { xff: `198.51.100.${i + 1}` })).status).toBe(401); // seven clients
    for (let i = 0; i < 5; i++) expect((await attempt('10.0.0.2', WRONG, { xff: `6.6.6.6, 198.51.100.77` })).status).toBe(401);
    expect((await attempt('10.0.0.2', WRONG, { xff: `7.7.7.7, 198.51.100.77` })).status).toBe(429); // the proxy saw .77 both times

    process.env.REDLOCK_TRUST_PROXY = '10.0.0.0/8';
    for (let i = 0; i < 5; i++) expect((await attempt('192.0.2.50', WRONG, { xff: `198.51.100.${i + 100}` })).status).toBe(401);
    expect((await attempt('192.0.2.50', WRONG, { xff: '198.51.100.200' })).status).toBe(429); // 192.0.2.50 is no trusted proxy
  });

  it("a stranger's wrong passwords do not make the operator's correct password answer 429", async () => {
    for (let i = 0; i < 8; i++) await attempt('198.51.100.23', WRONG, { xff: `1.2.3.${i}` });
    expect((await attempt('198.51.100.23', WRONG)).status).toBe(429); // the stranger is stopped…
    const operator = await attempt('192.0.2.10', USERS.operator); // …the operator, from their own address, is not
    expect(operator.status).toBe(200);
  });

  it("a stranger on the operator's own address cannot lock out the operator's browser (trusted device)", async () => {
    const first = await attempt('127.0.0.1', USERS.operator); // the operator signed in from this browser before
    expect(first.status).toBe(200);
    const device = deviceCookieOf(first);
    for (let i = 0; i < 8; i++) await attempt('127.0.0.1', WRONG);
    expect((await attempt('127.0.0.1', USERS.operator)).status).toBe(429); // a browser never seen: the address is limited
    expect((await attempt('127.0.0.1', USERS.operator, { cookie: device })).status).toBe(200); // the operator's browser is not
    // A device cookie is the operator's, for the operator: it neither helps another username nor survives a forgery.
    expect((await attempt('127.0.0.1', { username: 'someone', password: 'x' }, { cookie: device })).status).toBe(401);
    expect((await attempt('127.0.0.1', USERS.operator, { cookie: `${device.slice(0, -4)}AAAA` })).status).toBe(429);
  });

  it("a username under a distributed attack is slowed down, not locked: attempts take turns; the owner's browser skips the queue", async () => {
    const device = deviceCookieOf(await attempt('192.0.2.10', USERS.operator));
    for (let i = 0; i < 10; i++) expect((await attempt(`203.0.113.${i + 100}`, WRONG)).status).toBe(401); // ten addresses, one guess each
    const started = Date.now();
    const burst = await Promise.all(
      Array.from({ length: 9 }, (_, i) =>
        attempt(`198.18.0.${i + 1}`, WRONG).then((r) => ({ status: r.status, at: Date.now() - started })),
      ),
    );
    const served = burst.filter((b) => b.status === 401);
    // One turn a second for the whole username, at most five seconds ahead: six are served, in turn; the rest are told to come back.
    expect(served.length).toBeGreaterThanOrEqual(5);
    expect(served.length).toBeLessThanOrEqual(7);
    expect(burst.filter((b) => b.status === 429).length).toBe(9 - served.length);
    expect(Math.max(...served.map((b) => b.at))).toBeGreaterThanOrEqual(3_500);
    const owner = Date.now();
    expect((await attempt('192.0.2.10', USERS.operator, { cookie: device })).status).toBe(200);
    expect(Date.now() - owner).toBeLessThan(3_000); // not behind the queue
  }, 60_000);

  it('the limit is shared by every console process and survives a restart', async () => {
    for (let i = 0; i < 3; i++) expect((await attempt('203.0.113.44', WRONG)).status).toBe(401);
    const a = await detachConsole(); // a second process, B
    for (let i = 0; i < 2; i++) expect((await attempt('203.0.113.44', WRONG)).status).toBe(401);
    expect((await attempt('203.0.113.44', WRONG)).status).toBe(429); // B counts A's failures
    const b = await detachConsole();
    await attachConsole(a);
    expect((await attempt('203.0.113.44', WRONG)).status).toBe(429); // and A counts B's
    await closeConsole(b);
    await restartConsole();
    expect((await attempt('203.0.113.44', USERS.operator)).status).toBe(429);
  });

  it('100 concurrent wrong passwords: at most the limit are checked, the rest refused before any password work', async () => {
    const statuses = await Promise.all(Array.from({ length: 100 }, () => attempt('203.0.113.77', WRONG).then((r) => r.status)));
    const checked = statuses.filter((s) => s === 401).length;
    expect(checked).toBeGreaterThan(0);
    expect(checked).toBeLessThanOrEqual(LOGIN_LIMITS.attempts);
    expect(statuses.filter((s) => s !== 401).every((s) => s === 429)).toBe(true);
  });

  it('a new username each time does not buy a fresh limit: an address is limited across usernames', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < LOGIN_LIMITS.addressAttempts + 2; i++)
      statuses.push((await attempt('203.0.113.88', { username: `nobody-${i}`, password: 'guess' })).status);
    expect(statuses.slice(0, LOGIN_LIMITS.addressAttempts)).toEqual(Array(LOGIN_LIMITS.addressAttempts).fill(401));
    expect(statuses.slice(LOGIN_LIMITS.addressAttempts)).toEqual([429, 429]);
    const refused = await attempt('203.0.113.88', USERS.operator); // even a correct password, from a browser never seen there
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await attempt('203.0.113.89', USERS.operator)).status).toBe(200); // another address is not limited
  });
});
