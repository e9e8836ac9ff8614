import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { USERS, startApi, type ApiHarness } from '../support/api';
import { attachConsole, closeConsole, detachConsole, restartConsole } from '../support/console-process';

/**
 * Logout, password change and "sign out everywhere" must hold across a console
 * restart and across several console processes. Revocations live on the masters, not in memory.
 */

let api: ApiHarness;
beforeAll(async () => {
  api = await startApi({ nodes: 3 });
});
afterAll(async () => {
  await api?.stop();
});

interface Session {
  cookie: string;
  csrf: string;
}

async function login(who: 'operator' | 'viewer' = 'operator'): Promise<Session> {
  const res = await api.call('POST', '/api/auth/login', { body: USERS[who] });
  expect(res.status, await res.clone().text()).toBe(200);
  return { cookie: res.headers.get('set-cookie')!.split(';')[0]!, csrf: ((await res.json()) as { csrfToken: string }).csrfToken };
}

function headers(s: Session): Record<string, string> {
  return { cookie: s.cookie, 'x-csrf-token': s.csrf, origin: 'http://console.test' };
}

const me = async (s: Session) => (await api.call('GET', '/api/auth/me', { headers: headers(s) })).status;
const logout = async (s: Session, body: unknown = {}) => (await api.call('POST', '/api/auth/logout', { body, headers: headers(s) })).status;

describe('sessions are revoked for good', () => {
  it('a logged-out cookie stays refused after a console restart (and cannot force-release)', async () => {
    const s = await login();
    expect(await me(s)).toBe(200);
    expect(await logout(s)).toBe(200);
    expect(await me(s)).toBe(401);

    await restartConsole(); // a fresh console: same masters, same data dir (same signing secret), nothing in memory
    expect(await me(s)).toBe(401);
    const force = await api.call('POST', '/api/locks/anything/force-release', {
      body: { token: 'seen-token', reason: 'replayed cookie', dryRun: true },
      headers: headers(s),
    });
    expect(force.status).toBe(401);
    // …while a session that was never revoked survives the restart.
    const live = await login();
    await restartConsole();
    expect(await me(live)).toBe(200);
  });

  it('a logout in one console process is a logout in the other', async () => {
    const a = await detachConsole(); // process A keeps running, process B starts
    const s = await login(); // signed in through B
    const b = await detachConsole();
    await attachConsole(a);
    expect(await me(s)).toBe(200); // A accepts B's session
    expect(await logout(s)).toBe(200); // and logs it out
    const a2 = await detachConsole();
    await attachConsole(b);
    expect(await me(s)).toBe(401); // B refuses it
    await closeConsole(a2);
  });

  it('"sign out everywhere" ends every session of the user, in every process, but not other users\'', async () => {
    const first = await login();
    const second = await login();
    const viewer = await login('viewer');
    expect(await logout(first, { everywhere: true })).toBe(200);
    expect(await me(second)).toBe(401);
    expect(await me(viewer)).toBe(200);
    await restartConsole();
    expect(await me(second)).toBe(401);
    const again = await login(); // signing in afterwards works at once
    expect(await me(again)).toBe(200);
  });

  it('a changed password ends the sessions signed in with the old one', async () => {
    const viewer = await login('viewer');
    const old = process.env.REDLOCK_VIEWER_PASSWORD;
    try {
      process.env.REDLOCK_VIEWER_PASSWORD = 'a-new-viewer-password';
      await restartConsole();
      expect(await me(viewer)).toBe(401);
    } finally {
      process.env.REDLOCK_VIEWER_PASSWORD = old;
      await restartConsole();
    }
    expect(await me(viewer)).toBe(200); // the same password again: the same stamp
  });
});
