import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiErrorSchema } from '../../lib/api/common';
import { lockGrantSchema, releaseResponseSchema } from '../../lib/api/locks';
import { matchLockService } from '../../lib/server/lock-service/routes';
import { API_KEY, startApi, startLockServiceServer, type ApiHarness, type LockServiceServer } from '../support/api';

/**
 * The lock service answered before Next.js (lib/server/lock-service), over a real socket.
 * The authorization matrix, body limits and CSRF are the shared checks' (api-authz, security-body,
 * security-csrf tests); here: what only this path does — its routing, long-poll waits woken by
 * releases, and a client that goes away cancelling its wait.
 */
let api: ApiHarness;
let fast: LockServiceServer;
const asClient = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };

beforeAll(async () => {
  api = await startApi({ nodes: 3, maxTtlMs: 10_000 });
  fast = await startLockServiceServer();
});
afterAll(async () => {
  await fast?.close();
  await api?.stop();
});

async function post(path: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fast.send('POST', path, asClient, JSON.stringify(body));
  return { status: res.status, body: await res.json() };
}

describe('routing: only the three lock-service POSTs, everything else to Next.js', () => {
  it('matches acquire, extend and release, decodes the resource once, and leaves the rest alone', () => {
    expect(matchLockService('POST', '/api/locks')).toEqual({ kind: 'acquire' });
    expect(matchLockService('POST', '/api/locks?x=1')).toEqual({ kind: 'acquire' });
    expect(matchLockService('POST', '/api/locks/a%2Fb/extend')).toEqual({ kind: 'extend', resource: 'a/b' });
    expect(matchLockService('POST', '/api/locks/inv%2542/release')).toEqual({ kind: 'release', resource: 'inv%42' });
    expect(matchLockService('POST', '/api/locks/%E0%A4%A/release')).toMatchObject({ kind: 'bad-path' });
    for (const [method, url] of [
      ['GET', '/api/locks'],
      ['POST', '/api/locks/x/force-release'],
      ['POST', '/api/locks/x'],
      ['POST', '/api/locks//release'],
      ['POST', '/api/locks/x/release/more'],
      ['POST', '/api/lockss'],
      ['POST', '/api/locks/'],
    ] as const) {
      expect(matchLockService(method, url), `${method} ${url}`).toBeNull();
    }
    // The absolute form a client sends to a proxy names the same route.
    expect(matchLockService('POST', 'http://console.test/api/locks')).toEqual({ kind: 'acquire' });
    expect(matchLockService('GET', '/api/locks/x/release')).toEqual({ kind: 'wrong-method', method: 'GET' });
  });

  it("matches the semaphore's and the read-write lock's routes the same way, and nothing else under their roots", () => {
    expect(matchLockService('POST', '/api/semaphores')).toEqual({ kind: 'semaphore-acquire' });
    expect(matchLockService('POST', '/api/semaphores/a%2Fb/extend?x=1')).toEqual({ kind: 'semaphore-extend', resource: 'a/b' });
    expect(matchLockService('POST', '/api/semaphores/s/release')).toEqual({ kind: 'semaphore-release', resource: 's' });
    for (const mode of ['read', 'write', 'extend', 'release'])
      expect(matchLockService('POST', `/api/rwlocks/doc/${mode}`)).toEqual({ kind: `rw-${mode}`, resource: 'doc' });
    expect(matchLockService('POST', '/api/rwlocks/%E0%A4%A/read')).toMatchObject({ kind: 'bad-path' });
    expect(matchLockService('GET', '/api/rwlocks/doc/read')).toEqual({ kind: 'wrong-method', method: 'GET' });
    for (const [method, url] of [
      ['GET', '/api/semaphores'],
      ['POST', '/api/rwlocks'],
      ['POST', '/api/rwlocks/doc'],
      ['POST', '/api/rwlocks/doc/force-release'],
      ['POST', '/api/semaphores/s/read'],
      ['POST', '/api/semaphoress'],
      ['POST', '/api/rwlocks//read'],
    ] as const) {
      expect(matchLockService(method, url), `${method} ${url}`).toBeNull();
    }
  });

  it('another method on extend or release is a 405 naming POST (OPTIONS: 204), as Next.js answered it', async () => {
    const get = await fast.send('GET', '/api/locks/x/release', asClient);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('OPTIONS, POST');
    expect(apiErrorSchema.parse(await get.json()).error.code).toBe('METHOD_NOT_ALLOWED');
    const options = await fast.send('OPTIONS', '/api/locks/x/extend', {});
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')).toBe('OPTIONS, POST');
    expect(options.headers.get('x-frame-options')).toBe('DENY');
    expect(options.headers.get('content-security-policy')).toContain("default-src 'none'");
  });

  it('a body with a byte-order mark is read as JSON, as the Next.js routes read it', async () => {
    const res = await fast.send('POST', '/api/locks', asClient, `\uFEFF${JSON.stringify({ resource: 'fp-bom', ttlMs: 1_000 })}`);
    expect(res.status, await res.clone().text()).toBe(200);
    const { token } = lockGrantSchema.parse(await res.json());
    await post('/api/locks/fp-bom/release', { token });
  });

  it('a resource path that is not valid percent-encoding is a 400 with the error body, not a crash', async () => {
    const res = await post('/api/locks/%E0%A4%A/release', { token: 'x' });
    expect(res.status).toBe(400);
    expect(apiErrorSchema.parse(res.body).error.message).toMatch(/percent-encoding/);
  });
});

describe('sessions on the fast path: the CSRF proof and the Origin are checked as on every Next.js route', () => {
  it('an operator session is refused without the CSRF token, with a wrong one, and from another origin; accepted with both', async () => {
    const body = { resource: 'fp-csrf', ttlMs: 1_000 };
    const attacks: Array<Record<string, string>> = [
      { 'x-csrf-token': '' },
      { 'x-csrf-token': 'wrong-token' },
      { origin: 'https://evil.example' },
    ];
    for (const headers of attacks) {
      const res = await api.call('POST', '/api/locks', { as: 'operator', body, headers });
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(apiErrorSchema.parse(await res.json()).error.code, JSON.stringify(headers)).toBe('CSRF');
    }
    const ok = await api.call('POST', '/api/locks', { as: 'operator', body });
    expect(ok.status).toBe(200);
    const { token } = lockGrantSchema.parse(await ok.json());
    expect(
      (
        await api.call('POST', '/api/locks/fp-csrf/release', {
          as: 'operator',
          body: { token },
          headers: { origin: 'https://evil.example' },
        })
      ).status,
    ).toBe(403);
    expect((await api.call('POST', '/api/locks/fp-csrf/release', { as: 'operator', body: { token } })).status).toBe(200);
  });
});

describe('waitMs: a long-poll acquire waits on the release wake-up, and ends with its client', () => {
  it('a waiting acquire is granted right after the holder releases, long before its next retry would be due', async () => {
    const held = lockGrantSchema.parse((await post('/api/locks', { resource: 'fp-wait', ttlMs: 8_000 })).body);
    const waiting = post('/api/locks', { resource: 'fp-wait', ttlMs: 8_000, waitMs: 5_000 });
    // pace: the acquire is in its wait when the release comes
    await new Promise((resolve) => setTimeout(resolve, 400));
    const releasedAt = performance.now();
    expect(releaseResponseSchema.parse((await post('/api/locks/fp-wait/release', { token: held.token })).body).released).toBe(true);
    const granted = await waiting;
    const after = performance.now() - releasedAt;
    expect(granted.status).toBe(200);
    const lock = lockGrantSchema.parse(granted.body);
    expect(lock.token).not.toBe(held.token);
    // The core's retry sleep is 200 ± 100 ms; the wake-up arrives within a few ms of the release.
    expect(after).toBeLessThan(150);
    await post('/api/locks/fp-wait/release', { token: lock.token });
  });

  it('a wait that runs out is a 409 LOCK_CONTENDED (still held), never a 500', async () => {
    const held = lockGrantSchema.parse((await post('/api/locks', { resource: 'fp-timeout', ttlMs: 8_000 })).body);
    for (const waitMs of [150, 350, 600]) {
      const res = await post('/api/locks', { resource: 'fp-timeout', ttlMs: 1_000, waitMs });
      expect(res.status, `waitMs ${waitMs}: ${JSON.stringify(res.body)}`).toBe(409);
      expect(apiErrorSchema.parse(res.body).error.code).toBe('LOCK_CONTENDED');
    }
    await post('/api/locks/fp-timeout/release', { token: held.token });
  });

  it('a client that goes away while it waits stops waiting: the lock released after it left is taken by nobody', async () => {
    const held = lockGrantSchema.parse((await post('/api/locks', { resource: 'fp-gone', ttlMs: 8_000 })).body);
    const body = JSON.stringify({ resource: 'fp-gone', ttlMs: 8_000, waitMs: 4_000 });
    const req = httpRequest({
      host: '127.0.0.1',
      port: fast.port,
      path: '/api/locks',
      method: 'POST',
      headers: { ...asClient, 'content-length': Buffer.byteLength(body) },
    });
    req.on('error', () => undefined);
    req.end(body);
    // pace: the client goes away mid-wait
    await new Promise((resolve) => setTimeout(resolve, 300));
    req.destroy(); // the client goes away mid-wait
    // pace: the server sees the client gone before the release
    await new Promise((resolve) => setTimeout(resolve, 200));
    await post('/api/locks/fp-gone/release', { token: held.token });
    // Had the wait gone on, the departed client's acquire would now hold the lock until its ttl.
    // absence: 800 ms in which a departed client's acquire must not take the lock
    await new Promise((resolve) => setTimeout(resolve, 800));
    const free = await post('/api/locks', { resource: 'fp-gone', ttlMs: 1_000 });
    expect(free.status).toBe(200);
    await post('/api/locks/fp-gone/release', { token: lockGrantSchema.parse(free.body).token });
  });
});
