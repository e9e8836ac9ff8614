import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY, METRICS_TOKEN } from '../support/api';
import { lockKey, releaseChannel, tokenOf } from '@redlock-console/redlock';
import { startTestCluster, uniquePrefix, waitFor, type TestCluster } from '../support/cluster';
import { send } from '../support/console-server';
import { serviceEnv, startLockServiceProcess, tempDataDir, type LockServiceProcess } from '../support/lock-service-process';

/**
 * The lock service as a program of its own (scripts/lock-service-server.ts): the data plane's
 * routes and nothing else, its health, readiness and metrics, and a drain on SIGTERM that answers
 * what is in flight and refuses what comes after.
 */
const auth = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };

describe('the lock-service process', () => {
  let cluster: TestCluster;
  let data: ReturnType<typeof tempDataDir>;
  let env: Record<string, string>;
  let service: LockServiceProcess;

  beforeAll(async () => {
    // The supervisor marks its new masters clean for this prefix and ceiling (no first-run quarantine).
    const keyPrefix = uniquePrefix('svc');
    cluster = await startTestCluster({ nodes: 3, maxTtlMs: 5_000, keyPrefix });
    data = tempDataDir();
    env = { ...serviceEnv(cluster, data.dir, 5_000), REDLOCK_KEY_PREFIX: keyPrefix };
    service = await startLockServiceProcess(env);
  }, 90_000);

  afterAll(async () => {
    await service?.kill();
    await cluster?.stop();
    data?.remove();
  });

  it('takes, extends and releases a lock, and a second taker is refused while it is held', async () => {
    const acquired = await send(service.url, 'POST', '/api/locks', { headers: auth, body: { resource: 'job-1', ttlMs: 4_000 } });
    expect(acquired.status, acquired.body).toBe(200);
    const grant = JSON.parse(acquired.body) as { token: string; fence: number };
    expect(grant.fence).toBeGreaterThan(0);
    const contended = await send(service.url, 'POST', '/api/locks', { headers: auth, body: { resource: 'job-1', ttlMs: 4_000 } });
    expect(contended.status).toBe(409);
    expect(JSON.parse(contended.body).error.code).toBe('LOCK_CONTENDED');
    const extended = await send(service.url, 'POST', '/api/locks/job-1/extend', {
      headers: auth,
      body: { token: grant.token, ttlMs: 4_000 },
    });
    expect(extended.status, extended.body).toBe(200);
    const released = await send(service.url, 'POST', '/api/locks/job-1/release', { headers: auth, body: { token: grant.token } });
    expect(JSON.parse(released.body)).toMatchObject({ released: true });
  });

  it('refuses without an API key, and answers no console route', async () => {
    const anonymous = await send(service.url, 'POST', '/api/locks', { body: { resource: 'job-2', ttlMs: 1_000 } });
    expect(anonymous.status).toBe(401);
    for (const path of ['/api/locks', '/api/nodes', '/', '/api/audit']) {
      const other = await send(service.url, 'GET', path, { headers: auth });
      expect(other.status, path).toBe(404);
      const message = JSON.parse(other.body).error.message as string;
      expect(message).toMatch(/not a lock-service route/);
      // It names every route the service does answer.
      for (const answered of ['POST /api/locks,', 'POST /api/semaphores', 'POST /api/rwlocks/[resource]/write'])
        expect(message).toContain(answered);
    }
    const forced = await send(service.url, 'POST', '/api/force-release', { headers: auth, body: {} });
    expect(forced.status).toBe(404);
  });

  it('answers health and readiness, and metrics only to the metrics token', async () => {
    expect((await send(service.url, 'GET', '/api/health')).status).toBe(200);
    const ready = await send(service.url, 'GET', '/api/ready');
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.body)).toMatchObject({ ready: true, up: 3, quorum: 2, nodes: 3 });
    expect((await send(service.url, 'GET', '/api/metrics')).status).toBe(401);
    const scraped = await send(service.url, 'GET', '/api/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(scraped.status).toBe(200);
    expect(scraped.body).toMatch(/redlock_operations_total\{[^}]*operation="acquire"[^}]*outcome="ok"[^}]*\} [1-9]/);
  });

  /** A lock held for `holdMs` on `svc`, and a second acquire waiting for it (`waitMs`), in once it listens for the release. */
  async function holdAndWait(svc: LockServiceProcess, resource: string, holdMs: number, waitMs: number) {
    const held = await send(svc.url, 'POST', '/api/locks', { headers: auth, body: { resource, ttlMs: holdMs } });
    expect(held.status, held.body).toBe(200);
    const waiting = send(svc.url, 'POST', '/api/locks', { headers: auth, body: { resource, ttlMs: 1_000, waitMs } });
    // The waiter is in: its first attempt was refused and it listens for the release (a fresh
    // process's core subscribes to the release channel only when an acquire first waits).
    const node = cluster.client(1);
    await node.connect();
    const channel = releaseChannel(env.REDLOCK_KEY_PREFIX!);
    await waitFor(async () => Number(((await node.pubsub('NUMSUB', channel)) as [string, number])[1]) > 0, 10_000, 'the waiter subscribed');
    node.disconnect();
    return { token: (JSON.parse(held.body) as { token: string }).token, waiting };
  }

  it('drains on SIGTERM: a waiting acquire is answered, new connections are refused, exit 143', async () => {
    const drained = await startLockServiceProcess({ ...env, REDLOCK_DRAIN_MS: '8000' });
    // A second acquire waits for the first lease to run out (about 1.5 s), across the SIGTERM.
    const { waiting } = await holdAndWait(drained, 'drain-1', 1_500, 6_000);
    const exit = drained.kill('SIGTERM');
    const answered = await waiting;
    expect(answered.status, answered.body).toBe(200);
    await expect(send(drained.url, 'GET', '/api/health')).rejects.toThrow(/ECONNREFUSED/);
    expect(await exit).toEqual({ code: 143, signal: null });
  }, 30_000);

  it('an acquire still waiting when the drain ends is answered 503 with Retry-After, not reset, and takes no lock', async () => {
    const drained = await startLockServiceProcess({ ...env, REDLOCK_DRAIN_MS: '300' });
    // It waits for a lease that outlasts the drain (5 s against 0.3 s).
    const { token, waiting } = await holdAndWait(drained, 'drain-2', 5_000, 4_500);
    const exit = drained.kill('SIGTERM');
    const answered = await waiting;
    expect(answered.status, answered.body).toBe(503);
    expect(answered.headers['retry-after']).toBe('1');
    expect(JSON.parse(answered.body)).toMatchObject({ error: { code: 'UNAVAILABLE', message: expect.stringMatching(/shutting down/) } });
    expect(await exit).toEqual({ code: 143, signal: null });
    // The first holder's lock is untouched on every master: the stopped acquire took nothing.
    const key = lockKey(env.REDLOCK_KEY_PREFIX!, 'drain-2');
    for (const id of [1, 2, 3]) {
      const c = cluster.client(id);
      await c.connect();
      expect(tokenOf((await c.get(key)) ?? ''), `master ${id}`).toBe(token);
      c.disconnect();
    }
  }, 30_000);
});
