import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../lib/api/audit';
import { peerStamp, PEER_HEADER } from '../../lib/server/http/peer';
import { USERS, startApi, type ApiHarness } from '../support/api';
import { uniquePrefix } from '../support/cluster';
import { restartConsole } from '../support/console-process';

/**
 * Every failed login wrote an entry, with an attacker-chosen actor, to the
 * operators' capped audit stream on every master: enough of them pushed the real history out.
 * Failed logins are now aggregated per address + username + window, with a count, apart from it.
 */

let api: ApiHarness;
let prefix: string;
beforeAll(async () => {
  api = await startApi({ nodes: 3 });
});
afterAll(async () => {
  await api?.stop();
});
beforeEach(async () => {
  prefix = uniquePrefix('audit');
  process.env.REDLOCK_KEY_PREFIX = prefix;
  await restartConsole();
});

function attempt(peer: string, credentials: { username: string; password: string }) {
  return api.call('POST', '/api/auth/login', { body: credentials, headers: { [PEER_HEADER]: peerStamp(peer, null) } });
}

async function signIn(peer: string): Promise<Record<string, string>> {
  const res = await attempt(peer, USERS.operator);
  expect(res.status).toBe(200);
  const csrf = ((await res.json()) as { csrfToken: string }).csrfToken;
  return { cookie: res.headers.get('set-cookie')!.split(';')[0]!, 'x-csrf-token': csrf, origin: 'http://console.test' };
}

async function audit(operator: Record<string, string>, query = ''): Promise<AuditEntry[]> {
  const res = await api.call('GET', `/api/audit?limit=5000${query}`, { headers: operator });
  expect(res.status).toBe(200);
  return ((await res.json()) as { entries: AuditEntry[] }).entries;
}

describe('failed logins in the audit log', () => {
  it('are one entry per address + username + window, with a count (wrong passwords and refused attempts)', async () => {
    for (let i = 0; i < 8; i++) await attempt('203.0.113.7', { username: USERS.operator.username, password: 'wrong' }); // 5 wrong, 3 refused
    for (let i = 0; i < 3; i++) await attempt('198.51.100.4', { username: USERS.operator.username, password: 'wrong' });
    const operator = await signIn('192.0.2.1');
    const failed = (await audit(operator, '&action=login.failed')).filter((e) => e.target === USERS.operator.username);
    expect(failed).toHaveLength(2);
    const first = failed.find((e) => e.detail.includes('203.0.113.7'))!;
    expect(first).toMatchObject({ actor: 'anonymous', role: 'anonymous', action: 'login.failed', outcome: 'denied', count: 8 });
    expect(first.detail).toMatch(/5 wrong password\(s\), 3 refused by the login limit from 203\.0\.113\.7/);
    expect(failed.find((e) => e.detail.includes('198.51.100.4'))).toMatchObject({ count: 3 });
  });

  it("anonymous traffic never pushes out operator history: the operators' stream does not grow by one entry", async () => {
    const operator = await signIn('192.0.2.1');
    const session = await signIn('192.0.2.1');
    expect((await api.call('POST', '/api/auth/logout', { body: {}, headers: session })).status).toBe(200); // an operator action, audited
    const node = api.cluster.client(1);
    await node.connect();
    const before = await node.xlen(`${prefix}audit`);

    // A flood: 4 addresses × 12 usernames × 2 attempts, each username its own attacker-chosen text.
    const flood: Array<Promise<unknown>> = [];
    for (let a = 0; a < 4; a++) {
      for (let u = 0; u < 12; u++) {
        for (let k = 0; k < 2; k++) flood.push(attempt(`203.0.113.${a + 10}`, { username: `=cmd|' /C calc'!A${u}`, password: 'x' }));
      }
    }
    await Promise.all(flood);

    expect(await node.xlen(`${prefix}audit`)).toBe(before); // not one entry in the operators' stream
    const failures = await node.xlen(`${prefix}audit:login-failures`);
    expect(failures).toBeLessThanOrEqual(4 * 11); // ≤ 10 usernames per address and window, the rest folded into `*`
    const entries = await audit(operator);
    expect(entries.find((e) => e.action === 'logout' && e.actor === USERS.operator.username)).toBeTruthy();
    const folded = entries.filter((e) => e.action === 'login.failed' && e.target === '*');
    expect(folded).toHaveLength(4);
    expect(folded.reduce((sum, e) => sum + (e.count ?? 0), 0)).toBe(4 * 2 * 2);
    expect(entries.filter((e) => e.action === 'login.failed').reduce((sum, e) => sum + (e.count ?? 0), 0)).toBe(flood.length);
    // Every entry of the operators' stream names a signed-in principal.
    const raw = await node.xrange(`${prefix}audit`, '-', '+');
    for (const [, fields] of raw) expect(fields[fields.indexOf('role') + 1]).not.toBe('anonymous');
  }, 60_000);

  it("a viewer's sign-ins and sign-outs stay out of the operators' stream, in one capped apart, and still show in the log", async () => {
    const operator = await signIn('192.0.2.1');
    const node = api.cluster.client(1);
    if (node.status === 'wait') await node.connect();
    const before = await node.xlen(`${prefix}audit`);
    for (let i = 0; i < 10; i++) {
      const res = await attempt('192.0.2.2', USERS.viewer);
      expect(res.status).toBe(200);
      const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
      const csrf = ((await res.json()) as { csrfToken: string }).csrfToken;
      const out = await api.call('POST', '/api/auth/logout', {
        body: {},
        headers: { cookie, 'x-csrf-token': csrf, origin: 'http://console.test' },
      });
      expect(out.status).toBe(200);
    }
    expect(await node.xlen(`${prefix}audit`)).toBe(before); // not one entry in the operators' stream
    expect(await node.xlen(`${prefix}audit:viewer-sessions`)).toBe(20);
    const viewer = await audit(operator, `&actor=${USERS.viewer.username}`);
    expect(viewer.filter((e) => e.action === 'login')).toHaveLength(10);
    expect(viewer.filter((e) => e.action === 'logout')).toHaveLength(10);
    // An operator's own sign-in is the operators' history.
    expect(await node.xlen(`${prefix}audit`)).toBe(before);
    await signIn('192.0.2.1');
    expect(await node.xlen(`${prefix}audit`)).toBe(before + 1);
  });
});
