import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyUsageResponseSchema } from '../../lib/api/api-keys';
import { auditResponseSchema } from '../../lib/api/audit';
import { lockHistoryResponseSchema } from '../../lib/api/lock-history';
import type { LockGrant } from '../../lib/api/locks';
import { API_KEY, METRICS_TOKEN, USERS } from '../support/api';
import { waitFor } from '../support/cluster';
import {
  CLIENT_AUTH,
  send,
  signIn,
  startConsoleCluster,
  type ConsoleCluster,
  type ConsoleProcess,
  type ProcessSession,
} from '../support/console-server';

/**
 * Two consoles on one set of masters (operators run two so that an incident does not
 * take their tool away), as two real processes of scripts/console-server.ts. What one knows the
 * other must know: sessions and logouts, locks, login limits, the API keys' quotas, the audit log
 * and the lock history; and each one's metrics say which console they are (the `replica` label).
 */

const QUOTA_HELD = 2;
/** A key of its own for the quota test (the other tests' locks do not count against it). */
const QUOTA_KEY = 'quota-key-0123456789abcdef01234567';
const QUOTA_AUTH = { authorization: `Bearer ${QUOTA_KEY}` };
let cc: ConsoleCluster;
let a: ConsoleProcess;
let b: ConsoleProcess;
beforeAll(async () => {
  cc = await startConsoleCluster({ nodes: 3, maxTtlMs: 30_000 });
  const env = {
    REDLOCK_API_KEYS: `test-client=${API_KEY},quota-client=${QUOTA_KEY}`,
    REDLOCK_API_KEY_QUOTAS: `quota-client:held=${QUOTA_HELD}`,
    REDLOCK_METRICS_TOKEN: METRICS_TOKEN,
    // A master's answer may take a while on a busy two-core host: 1 s, not 100 ms.
    REDLOCK_NODE_TIMEOUT_MS: '1000',
  };
  a = await cc.start({ ...env, REDLOCK_INSTANCE: 'console-a' });
  b = await cc.start({ ...env, REDLOCK_INSTANCE: 'console-b' });
}, 180_000);
afterAll(async () => {
  await cc?.stop();
});

const json = (body: unknown) => ({ 'content-type': 'application/json', ...(body as Record<string, string>) });
const as = (s: ProcessSession, url: string) => s.headers(url);

describe('two consoles on one set of masters', () => {
  it('a session made on one is valid on the other, and a logout on one ends it on both', async () => {
    const session = await signIn(a.url, 'operator');
    expect((await send(b.url, 'GET', '/api/auth/me', { headers: as(session, b.url) })).status).toBe(200);
    const out = await send(b.url, 'POST', '/api/auth/logout', { headers: json(as(session, b.url)), body: {} });
    expect(out.status, out.body).toBe(200);
    expect((await send(a.url, 'GET', '/api/auth/me', { headers: as(session, a.url) })).status).toBe(401);
    expect((await send(b.url, 'GET', '/api/auth/me', { headers: as(session, b.url) })).status).toBe(401);
  });

  it('a lock taken through one is contended through the other', async () => {
    const taken = await send(a.url, 'POST', '/api/locks', { headers: CLIENT_AUTH, body: { resource: 'rep-lock', ttlMs: 10_000 } });
    expect(taken.status, taken.body).toBe(200);
    const again = await send(b.url, 'POST', '/api/locks', { headers: CLIENT_AUTH, body: { resource: 'rep-lock', ttlMs: 10_000 } });
    expect(again.status, again.body).toBe(409);
    const { token } = JSON.parse(taken.body) as LockGrant;
    const released = await send(b.url, 'POST', '/api/locks/rep-lock/release', { headers: CLIENT_AUTH, body: { token } });
    expect(JSON.parse(released.body)).toMatchObject({ released: true });
  });

  it('login limits are shared: the failures counted through one refuse the next attempt through the other', async () => {
    // An address of its own (127.0.0.9): the other tests sign in from 127.0.0.1.
    const wrong = { username: USERS.viewer.username, password: 'not the password at all' };
    for (let i = 0; i < 5; i++) {
      const res = await send(a.url, 'POST', '/api/auth/login', { body: wrong, localAddress: '127.0.0.9' });
      expect(res.status, res.body).toBe(401);
    }
    const sixth = await send(b.url, 'POST', '/api/auth/login', { body: USERS.viewer, localAddress: '127.0.0.9' });
    expect(sixth.status, sixth.body).toBe(429);
  });

  it("API-key quotas are shared: locks held through one count against the key's quota through the other", async () => {
    const operator = await signIn(b.url, 'operator');
    const usageOn = async (c: ConsoleProcess) => {
      const res = await send(c.url, 'GET', '/api/api-keys', { headers: operator.headers(c.url) });
      expect(res.status, res.body).toBe(200);
      const body = apiKeyUsageResponseSchema.parse(JSON.parse(res.body));
      return { scope: body.scope, held: body.keys.find((k) => k.name === 'quota-client')?.held ?? 0 };
    };
    const taken = await send(a.url, 'POST', '/api/locks', {
      headers: QUOTA_AUTH,
      body: { resources: ['rep-q1', 'rep-q2'], ttlMs: 20_000 },
    });
    expect(taken.status, taken.body).toBe(200);
    // A writes its use to the masters after its answer (within SYNC_GAP_MS of the grant, later on a
    // busy host), and GET /api/api-keys on B reads them first: B sees it within a few syncs.
    await waitFor(async () => (await usageOn(b)).held === QUOTA_HELD, 5_000, "B to see A's grant");
    expect(await usageOn(b)).toEqual({ scope: 'shared', held: QUOTA_HELD });
    const refused = await send(b.url, 'POST', '/api/locks', { headers: QUOTA_AUTH, body: { resource: 'rep-q3', ttlMs: 5_000 } });
    expect(refused.status, refused.body).toBe(429);
    expect(JSON.parse(refused.body)).toMatchObject({
      error: { code: 'TOO_MANY_REQUESTS', details: { quota: 'locks-held', limit: QUOTA_HELD } },
    });
    // Released through A: the room comes back on B too.
    const { token } = JSON.parse(taken.body) as LockGrant;
    const released = await send(a.url, 'POST', '/api/locks/rep-q1/release', {
      headers: QUOTA_AUTH,
      body: { token, resources: ['rep-q1', 'rep-q2'] },
    });
    expect(released.status, released.body).toBe(200);
    await waitFor(async () => (await usageOn(b)).held === 0, 10_000, "B to see A's release");
    const granted = await send(b.url, 'POST', '/api/locks', { headers: QUOTA_AUTH, body: { resource: 'rep-q3', ttlMs: 20_000 } });
    expect(granted.status, granted.body).toBe(200);
    // Released through the other console (A) than the one that granted it: B gives the room back.
    const grant = JSON.parse(granted.body) as LockGrant;
    const gone = await send(a.url, 'POST', '/api/locks/rep-q3/release', { headers: QUOTA_AUTH, body: { token: grant.token } });
    expect(JSON.parse(gone.body)).toMatchObject({ released: true });
    // Within a few syncs (250 ms each), long before the lease's 20 s would have given it back.
    await waitFor(async () => (await usageOn(a)).held === 0, 5_000, "B's grant released through A to be given back");
  });

  it('audit and lock-history entries from both interleave in one order, the same on both', async () => {
    const operator = await signIn(a.url, 'operator');
    // Alternate consoles: four grants and their force-releases, each audited and in the history.
    const order: string[] = [];
    for (const [i, c] of [a, b, a, b].entries()) {
      const resource = `rep-order-${i}`;
      const taken = await send(c.url, 'POST', '/api/locks', { headers: CLIENT_AUTH, body: { resource, ttlMs: 10_000 } });
      expect(taken.status, taken.body).toBe(200);
      const { token } = JSON.parse(taken.body) as LockGrant;
      const forced = await send(c.url, 'POST', `/api/locks/${resource}/force-release`, {
        headers: json(operator.headers(c.url)),
        body: { token, reason: `replica order ${i}`, confirmLiveHolder: true },
      });
      expect(forced.status, forced.body).toBe(200);
      order.push(resource);
    }
    const auditOn = async (c: ConsoleProcess) => {
      const res = await send(c.url, 'GET', '/api/audit?action=lock.force-release', { headers: operator.headers(c.url) });
      expect(res.status, res.body).toBe(200);
      return auditResponseSchema
        .parse(JSON.parse(res.body))
        .entries.filter((e) => e.target.startsWith('rep-order-'))
        .map((e) => `${e.target} ${e.outcome}`);
    };
    const expected = [...order].reverse().map((r) => `${r} ok`); // newest first
    expect(await auditOn(a)).toEqual(expected);
    expect(await auditOn(b)).toEqual(expected);
    // The history is written in batches: wait for every console's entries, then compare.
    const historyOn = async (c: ConsoleProcess, resource: string) => {
      const res = await send(c.url, 'GET', `/api/locks/${resource}/history`, { headers: operator.headers(c.url) });
      return res.status === 200 ? lockHistoryResponseSchema.parse(JSON.parse(res.body)).entries : [];
    };
    const everything = async (c: ConsoleProcess) => (await Promise.all(order.map((r) => historyOn(c, r)))).flat();
    // Each force-release is two entries: its write-ahead one, then its end.
    await waitFor(async () => (await everything(a)).length === 12 && (await everything(b)).length === 12, 15_000, 'both histories');
    const sequence = async (c: ConsoleProcess) =>
      (await everything(c)).sort((x, y) => x.at - y.at || (x.id < y.id ? -1 : 1)).map((e) => `${e.resources[0]} ${e.event}`);
    const expectedHistory = order.flatMap((r) => [`${r} granted`, `${r} force-released`, `${r} force-released`]);
    expect(await sequence(a)).toEqual(expectedHistory);
    expect(await sequence(b)).toEqual(expectedHistory);
  });

  it("with the masters out of reach (partitioned from both consoles), the quotas open to each console's own share: answers, never a 500", async () => {
    const operator = await signIn(b.url, 'operator');
    for (const id of [1, 2, 3]) await cc.cluster.supervisor.act(id, { action: 'partition' });
    try {
      const usage = await send(b.url, 'GET', '/api/api-keys', { headers: operator.headers(b.url) });
      expect(usage.status, usage.body).toBe(200);
      // The exchange has not read the masters for 3 s: each console says it counts only its own.
      await waitFor(
        async () =>
          apiKeyUsageResponseSchema.parse(
            JSON.parse((await send(b.url, 'GET', '/api/api-keys', { headers: operator.headers(b.url) })).body),
          ).scope === 'process',
        15_000,
        'scope: process',
      );
      // No lock can be granted anyway: the acquire is admitted by the quota and fails at the masters (503).
      const acquire = await send(b.url, 'POST', '/api/locks', { headers: QUOTA_AUTH, body: { resource: 'rep-q-down', ttlMs: 5_000 } });
      expect(acquire.status, acquire.body).toBe(503);
    } finally {
      for (const id of [1, 2, 3]) await cc.cluster.supervisor.act(id, { action: 'heal' });
    }
  });

  it('metrics carry the console they came from (the replica label)', async () => {
    const token = { authorization: `Bearer ${METRICS_TOKEN}` };
    for (const [c, name] of [
      [a, 'console-a'],
      [b, 'console-b'],
    ] as const) {
      const res = await send(c.url, 'GET', '/api/metrics', { headers: token });
      expect(res.status, res.body.slice(0, 200)).toBe(200);
      expect(res.body).toMatch(new RegExp(`^redlock_cluster_quorum\\{replica="${name}"\\} 2$`, 'm'));
      expect(res.body).toMatch(new RegExp(`^redlock_operations_total\\{[^}]*replica="${name}"[^}]*\\} `, 'm'));
    }
  });
});
