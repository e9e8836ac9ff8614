import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Permission } from '../../lib/server/auth/principal';
import { METRICS_TOKEN, USERS, routePatterns, startApi, type ApiHarness, type Who } from '../support/api';

/**
 * THE table: every route of app/api with its method, the permission it needs, and a harmless
 * request that an allowed caller can make. The last test fails when a route file or method
 * exists that this table does not list, so a new route cannot skip the authorization check.
 */
const ROUTES: Array<{ method: string; pattern: string; path: (who: Who) => string; permission: Permission; body?: (who: Who) => unknown }> = [
  { method: 'GET', pattern: '/api/health', path: () => '/api/health', permission: 'public' },
  { method: 'GET', pattern: '/api/ready', path: () => '/api/ready', permission: 'public' },
  { method: 'POST', pattern: '/api/auth/login', path: () => '/api/auth/login', permission: 'public', body: () => USERS.viewer },
  { method: 'POST', pattern: '/api/auth/logout', path: () => '/api/auth/logout', permission: 'read', body: () => ({}) },
  { method: 'GET', pattern: '/api/auth/me', path: () => '/api/auth/me', permission: 'read' },
  { method: 'GET', pattern: '/api/nodes', path: () => '/api/nodes', permission: 'read' },
  { method: 'POST', pattern: '/api/nodes/[id]/actions', path: () => '/api/nodes/1/actions', permission: 'operate', body: () => ({ action: 'heal' }) },
  { method: 'POST', pattern: '/api/nodes/[id]/mark-clean', path: () => '/api/nodes/1/mark-clean', permission: 'operate', body: () => ({ reason: 'authz matrix' }) },
  { method: 'GET', pattern: '/api/locks', path: () => '/api/locks?limit=5', permission: 'read' },
  { method: 'POST', pattern: '/api/locks', path: () => '/api/locks', permission: 'lock', body: (who) => ({ resource: `authz-${who}`, ttlMs: 2_000 }) },
  { method: 'GET', pattern: '/api/locks/[resource]', path: () => '/api/locks/authz-x', permission: 'read' },
  { method: 'POST', pattern: '/api/locks/[resource]/extend', path: () => '/api/locks/authz-x/extend', permission: 'lock', body: () => ({ token: 'not-held', ttlMs: 1_000 }) },
  { method: 'POST', pattern: '/api/locks/[resource]/release', path: () => '/api/locks/authz-x/release', permission: 'lock', body: () => ({ token: 'not-held' }) },
  { method: 'POST', pattern: '/api/locks/[resource]/force-release', path: () => '/api/locks/authz-x/force-release', permission: 'operate', body: () => ({ token: 'not-held', reason: 'authz matrix', dryRun: true }) },
  { method: 'GET', pattern: '/api/events', path: () => '/api/events', permission: 'read' },
  { method: 'GET', pattern: '/api/audit', path: () => '/api/audit?limit=5', permission: 'read' },
  { method: 'GET', pattern: '/api/metrics', path: () => '/api/metrics', permission: 'metrics' },
  { method: 'GET', pattern: '/api/history', path: () => '/api/history', permission: 'read' },
  { method: 'GET', pattern: '/api/scenarios', path: () => '/api/scenarios', permission: 'read' },
  { method: 'POST', pattern: '/api/scenarios/[id]/runs', path: () => '/api/scenarios/no-such/runs', permission: 'operate', body: () => ({}) },
  { method: 'GET', pattern: '/api/scenarios/runs/current', path: () => '/api/scenarios/runs/current', permission: 'read' },
  { method: 'POST', pattern: '/api/scenarios/runs/current/[action]', path: () => '/api/scenarios/runs/current/pause', permission: 'operate', body: () => ({}) },
  { method: 'GET', pattern: '/api/chaos/report', path: () => '/api/chaos/report', permission: 'read' },
];

const ALLOWED: Record<Permission, Who[]> = {
  public: ['anonymous', 'viewer', 'operator', 'client'],
  read: ['viewer', 'operator'],
  lock: ['operator', 'client'],
  operate: ['operator'],
  metrics: ['viewer', 'operator'],
};
const WHO: Who[] = ['anonymous', 'viewer', 'operator', 'client'];

let api: ApiHarness;
beforeAll(async () => {
  api = await startApi({ nodes: 3 });
});
afterAll(async () => {
  await api?.stop();
});

describe('authorization matrix: every route × every role', () => {
  for (const r of ROUTES) {
    for (const who of WHO) {
      const allowed = ALLOWED[r.permission].includes(who);
      it(`${r.method} ${r.pattern} as ${who} → ${allowed ? 'allowed' : who === 'anonymous' ? '401' : '403'}`, async () => {
        const res = await api.call(r.method, r.path(who), { as: who, body: r.body?.(who) });
        const streaming = res.headers.get('content-type')?.startsWith('text/event-stream');
        const text = streaming ? '' : await res.text();
        if (streaming) await res.body?.cancel();
        if (allowed) {
          expect([401, 403], text).not.toContain(res.status);
          expect(res.status).toBeLessThan(500);
        } else {
          expect(res.status).toBe(who === 'anonymous' ? 401 : 403);
          expect((JSON.parse(text) as { error: { message: string } }).error.message).toBeTruthy();
        }
      });
    }
  }

  it('the metrics scrape token reads /api/metrics and nothing else', async () => {
    const scrape = await api.call('GET', '/api/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(scrape.status).toBe(200);
    expect(await scrape.text()).toContain('redlock_node_up');
    expect((await api.call('GET', '/api/nodes', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).status).toBe(403);
  });

  it('an unknown API key is 401, not anonymous access; liveness answers regardless', async () => {
    const res = await api.call('GET', '/api/nodes', { headers: { authorization: 'Bearer nope' } });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe('unknown API key');
    expect((await api.call('GET', '/api/health', { headers: { authorization: 'Bearer nope' } })).status).toBe(200);
  });

  it('cookie mutations need the CSRF token and a same-origin Origin', async () => {
    const noToken = await api.call('POST', '/api/nodes/1/actions', { as: 'operator', body: { action: 'heal' }, headers: { 'x-csrf-token': 'wrong' } });
    expect(noToken.status).toBe(403);
    const crossOrigin = await api.call('POST', '/api/nodes/1/actions', { as: 'operator', body: { action: 'heal' }, headers: { origin: 'https://evil.example' } });
    expect(crossOrigin.status).toBe(403);
    expect(((await crossOrigin.json()) as { error: { code: string } }).error.code).toBe('CSRF');
  });

  it('lists every route file and method in the table above', async () => {
    const files = routePatterns();
    const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
    const present: string[] = [];
    for (const pattern of files) {
      const mod = (await import(/* @vite-ignore */ `../../app${pattern}/route.ts`)) as Record<string, unknown>;
      for (const m of methods) if (typeof mod[m] === 'function') present.push(`${m} ${pattern}`);
    }
    expect(present.sort()).toEqual(ROUTES.map((r) => `${r.method} ${r.pattern}`).sort());
  });
});
