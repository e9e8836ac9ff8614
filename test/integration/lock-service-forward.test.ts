import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY, METRICS_TOKEN, startApi, startLockServiceServer, type ApiHarness, type LockServiceServer } from '../support/api';
import { send } from '../support/console-server';
import { startLockServiceProcess, type LockServiceProcess } from '../support/lock-service-process';

/**
 * With a lock-service process configured (REDLOCK_LOCK_SERVICE_URL, as `npm start` runs them), the
 * console forwards the lock routes to it and answers none itself (lib/server/lock-service/forward.ts):
 * one owner per route. The service counts what the console forwarded; a session's playground
 * request keeps its CSRF proof across the hop; a service that is gone is a 503 that says so.
 */
let api: ApiHarness;
let service: LockServiceProcess;
/** The console's front (lib/server/http/front.ts) forwarding to the service, with a short anonymous idle timeout. */
let front: LockServiceServer;
const ANONYMOUS_IDLE_MS = 300;
const key = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };

beforeAll(async () => {
  api = await startApi({ nodes: 3, nodeTimeoutMs: 1_000 });
  // The same environment as the console's (masters, data dir, keys, users): one process each, as npm start runs them.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('REDLOCK_'))) as Record<string, string>;
  service = await startLockServiceProcess(env);
  process.env.REDLOCK_LOCK_SERVICE_URL = service.url;
  front = await startLockServiceServer({ anonymousIdleMs: ANONYMOUS_IDLE_MS });
}, 90_000);

afterAll(async () => {
  await front?.close();
  delete process.env.REDLOCK_LOCK_SERVICE_URL;
  await service?.kill();
  await api?.stop();
});

async function serviceAcquires(): Promise<number> {
  const scraped = await send(service.url, 'GET', '/api/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const line = /^redlock_operations_total\{[^}]*operation="acquire"[^}]*outcome="ok"[^}]*\} (\d+)/m.exec(scraped.body);
  return line ? Number(line[1]) : 0;
}

describe('the console with a lock-service process', () => {
  it("forwards an API key's acquire to the service, which holds it against its own clients", async () => {
    const before = await serviceAcquires();
    const res = await api.call('POST', '/api/locks', { as: 'client', body: { resource: 'fw-1', ttlMs: 3_000 } });
    expect(res.status, await res.clone().text()).toBe(200);
    const grant = (await res.json()) as { token: string };
    expect(await serviceAcquires()).toBe(before + 1);
    const direct = await send(service.url, 'POST', '/api/locks', { headers: key, body: { resource: 'fw-1', ttlMs: 3_000 } });
    expect(direct.status).toBe(409);
    // The console's own charts count the acquire it forwarded (its core never saw it).
    const history = (await (await api.call('GET', '/api/history', { as: 'viewer' })).json()) as { buckets: Array<{ acquireOk: number }> };
    expect(history.buckets.reduce((sum, b) => sum + b.acquireOk, 0)).toBeGreaterThanOrEqual(1);
    const released = await api.call('POST', '/api/locks/fw-1/release', { as: 'client', body: { token: grant.token } });
    expect(((await released.json()) as { released: boolean }).released).toBe(true);
  });

  it('forwards the semaphore and read-write lock routes too: the service holds the permit and the writer against its own clients', async () => {
    const before = await serviceAcquires();
    const res = await api.call('POST', '/api/semaphores', { as: 'client', body: { resource: 'fw-sem', limit: 1, ttlMs: 3_000 } });
    expect(res.status, await res.clone().text()).toBe(200);
    const permit = (await res.json()) as { token: string; slots: number[] };
    expect(await serviceAcquires()).toBe(before + 1);
    const direct = await send(service.url, 'POST', '/api/semaphores', {
      headers: key,
      body: { resource: 'fw-sem', limit: 1, ttlMs: 3_000 },
    });
    expect(direct.status).toBe(409);
    const released = await api.call('POST', '/api/semaphores/fw-sem/release', {
      as: 'client',
      body: { token: permit.token, slots: permit.slots },
    });
    expect(((await released.json()) as { released: boolean }).released).toBe(true);

    const writer = await api.call('POST', '/api/rwlocks/fw-rw/write', { as: 'client', body: { ttlMs: 3_000 } });
    expect(writer.status, await writer.clone().text()).toBe(200);
    const grant = (await writer.json()) as { token: string; slots: number[] };
    expect(await serviceAcquires()).toBe(before + 2);
    const reader = await send(service.url, 'POST', '/api/rwlocks/fw-rw/read', { headers: key, body: { ttlMs: 3_000 } });
    expect(reader.status).toBe(409);
    const done = await api.call('POST', '/api/rwlocks/fw-rw/release', { as: 'client', body: { token: grant.token, slots: grant.slots } });
    expect(((await done.json()) as { released: boolean }).released).toBe(true);
  });

  it("forwards an operator's playground acquire with its session and CSRF proof, and refuses it without the proof", async () => {
    const ok = await api.call('POST', '/api/locks', { as: 'operator', body: { resource: 'fw-2', ttlMs: 2_000 } });
    expect(ok.status, await ok.clone().text()).toBe(200);
    const noProof = await api.call('POST', '/api/locks', {
      as: 'operator',
      body: { resource: 'fw-3', ttlMs: 2_000 },
      headers: { 'x-csrf-token': 'wrong' },
    });
    expect(noProof.status).toBe(403);
  });

  it("waits out a forwarded acquire's waitMs on a new connection, past the anonymous idle timeout", async () => {
    const held = await send(service.url, 'POST', '/api/locks', { headers: key, body: { resource: 'fw-idle', ttlMs: 1_000 } });
    expect(held.status, held.body).toBe(200);
    const started = performance.now();
    // The first request of a fresh connection: granted when the holder's lease ends (~1 s), not cut at 300 ms.
    const waited = await send(`http://127.0.0.1:${front.port}`, 'POST', '/api/locks', {
      headers: key,
      body: { resource: 'fw-idle', ttlMs: 1_000, waitMs: 4_000 },
    });
    expect(waited.status, waited.body).toBe(200);
    expect(performance.now() - started).toBeGreaterThan(ANONYMOUS_IDLE_MS);
  });

  it("ends the service's wait when the client goes away mid-acquire: nothing is granted to nobody", async () => {
    const held = await send(service.url, 'POST', '/api/locks', { headers: key, body: { resource: 'fw-gone', ttlMs: 1_500 } });
    expect(held.status, held.body).toBe(200);
    const body = JSON.stringify({ resource: 'fw-gone', ttlMs: 3_000, waitMs: 6_000 });
    const socket = connect(front.port, '127.0.0.1');
    socket.on('error', () => undefined);
    await new Promise((r) => socket.once('connect', r));
    socket.write(
      `POST /api/locks HTTP/1.1\r\nhost: console.test\r\nauthorization: Bearer ${API_KEY}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
    );
    await new Promise((r) => setTimeout(r, 300)); // pace: the forwarded acquire is waiting at the service
    socket.destroy();
    // absence: past the holder's lease (1.5 s), a waiter still waiting would have been granted by now
    await new Promise((r) => setTimeout(r, 2_500));
    const after = await send(service.url, 'POST', '/api/locks', { headers: key, body: { resource: 'fw-gone', ttlMs: 1_000 } });
    expect(after.status, after.body).toBe(200);
  });

  it('answers 503 naming the service when the service is gone, never 500', async () => {
    await service.kill();
    const res = await api.call('POST', '/api/locks', { as: 'client', body: { resource: 'fw-4', ttlMs: 2_000 } });
    expect(res.status).toBe(503);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('UNAVAILABLE');
    expect(body.error.message).toContain(service.url);
  });
});
