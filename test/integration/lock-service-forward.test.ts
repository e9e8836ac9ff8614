import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY, METRICS_TOKEN, startApi, type ApiHarness } from '../support/api';
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
const key = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };

beforeAll(async () => {
  api = await startApi({ nodes: 3, nodeTimeoutMs: 1_000 });
  // The same environment as the console's (masters, data dir, keys, users): one process each, as npm start runs them.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('REDLOCK_'))) as Record<string, string>;
  service = await startLockServiceProcess(env);
  process.env.REDLOCK_LOCK_SERVICE_URL = service.url;
}, 90_000);

afterAll(async () => {
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

  it('answers 503 naming the service when the service is gone, never 500', async () => {
    await service.kill();
    const res = await api.call('POST', '/api/locks', { as: 'client', body: { resource: 'fw-4', ttlMs: 2_000 } });
    expect(res.status).toBe(503);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('UNAVAILABLE');
    expect(body.error.message).toContain(service.url);
  });
});
