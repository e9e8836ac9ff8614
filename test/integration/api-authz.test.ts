import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ZodType } from 'zod';
import { apiKeyUsageResponseSchema } from '../../lib/api/api-keys';
import { logoutResponseSchema, meSchema } from '../../lib/api/auth';
import { auditResponseSchema } from '../../lib/api/audit';
import { chaosReportResponseSchema } from '../../lib/api/chaos-report';
import { apiErrorSchema } from '../../lib/api/common';
import { healthResponseSchema, readinessResponseSchema } from '../../lib/api/health';
import { historyResponseSchema } from '../../lib/api/history';
import {
  bulkForceReleaseResponseSchema,
  forceReleaseResponseSchema,
  lockDetailResponseSchema,
  lockGrantSchema,
  lockListResponseSchema,
  releaseResponseSchema,
} from '../../lib/api/locks';
import { nodeActionResponseSchema } from '../../lib/api/node-actions';
import { rwGrantSchema } from '../../lib/api/rwlocks';
import { permitSchema, slotsReleaseResponseSchema } from '../../lib/api/semaphores';
import { markCleanResponseSchema, nodesResponseSchema } from '../../lib/api/nodes';
import { runResponseSchema, scenarioListSchema } from '../../lib/api/scenarios';
import type { Permission } from '../../lib/server/auth/principal';
import { lockHistoryResponseSchema, lockServiceLogResponseSchema } from '../../lib/api/lock-history';
import { openApiDocumentSchema } from '../../lib/api/openapi';
import { slotHistoryResponseSchema } from '../../lib/api/slot-history';
import { slotLockDetailResponseSchema, slotLockListResponseSchema } from '../../lib/api/slot-locks';
import { AUTH_ROUTES } from '../../lib/server/auth-routes/routes';
import { EVENT_STREAM_ROUTES } from '../../lib/server/events/stream-route';
import { LOCK_SERVICE_ROUTES } from '../../lib/server/lock-service/routes';
import { METRICS_TOKEN, USERS, routePatterns, startApi, type ApiHarness, type Who } from '../support/api';

/**
 * THE table: every route of app/api with its method, the permission it needs, and a harmless
 * request that an allowed caller can make. The last test fails when a route file or method
 * exists that this table does not list, so a new route cannot skip the authorization check.
 * `reply`: the lib/api schema of the route's JSON answer (lib/api is the one contract): every 2xx
 * answer here must parse with it, every error with apiErrorSchema. None: not JSON (a stream, the
 * Prometheus text format), or this request's answer is an error.
 */
const ROUTES: Array<{
  method: string;
  pattern: string;
  path: (who: Who) => string;
  permission: Permission;
  body?: (who: Who) => unknown;
  reply?: ZodType;
}> = [
  { method: 'GET', pattern: '/api/health', path: () => '/api/health', permission: 'public', reply: healthResponseSchema },
  { method: 'GET', pattern: '/api/ready', path: () => '/api/ready', permission: 'public', reply: readinessResponseSchema },
  { method: 'GET', pattern: '/api/openapi.json', path: () => '/api/openapi.json', permission: 'public', reply: openApiDocumentSchema },
  {
    method: 'POST',
    pattern: '/api/auth/login',
    path: () => '/api/auth/login',
    permission: 'public',
    body: () => USERS.viewer,
    reply: meSchema,
  },
  {
    method: 'POST',
    pattern: '/api/auth/logout',
    path: () => '/api/auth/logout',
    permission: 'read',
    body: () => ({}),
    reply: logoutResponseSchema,
  },
  { method: 'GET', pattern: '/api/auth/me', path: () => '/api/auth/me', permission: 'read', reply: meSchema },
  { method: 'GET', pattern: '/api/nodes', path: () => '/api/nodes', permission: 'read', reply: nodesResponseSchema },
  {
    method: 'POST',
    pattern: '/api/nodes/[id]/actions',
    path: () => '/api/nodes/1/actions',
    permission: 'operate',
    body: () => ({ action: 'heal' }),
    reply: nodeActionResponseSchema,
  },
  {
    method: 'POST',
    pattern: '/api/nodes/[id]/mark-clean',
    path: () => '/api/nodes/1/mark-clean',
    permission: 'operate',
    body: () => ({ reason: 'authz matrix' }),
    reply: markCleanResponseSchema,
  },
  { method: 'GET', pattern: '/api/locks', path: () => '/api/locks?limit=5', permission: 'read', reply: lockListResponseSchema },
  {
    method: 'POST',
    pattern: '/api/locks',
    path: () => '/api/locks',
    permission: 'lock',
    body: (who) => ({ resource: `authz-${who}`, ttlMs: 2_000 }),
    reply: lockGrantSchema,
  },
  {
    method: 'GET',
    pattern: '/api/locks/[resource]',
    path: () => '/api/locks/authz-x',
    permission: 'read',
    reply: lockDetailResponseSchema,
  },
  {
    method: 'GET',
    pattern: '/api/lock-history',
    path: () => '/api/lock-history?principal=client%3Atest-client&limit=5',
    permission: 'read',
    reply: lockServiceLogResponseSchema,
  },
  {
    method: 'GET',
    pattern: '/api/api-keys',
    path: () => '/api/api-keys',
    permission: 'read',
    reply: apiKeyUsageResponseSchema,
  },
  {
    method: 'GET',
    pattern: '/api/locks/[resource]/history',
    path: () => '/api/locks/authz-x/history?limit=5',
    permission: 'read',
    reply: lockHistoryResponseSchema,
  },
  {
    method: 'POST',
    pattern: '/api/locks/[resource]/extend',
    path: () => '/api/locks/authz-x/extend',
    permission: 'lock',
    body: () => ({ token: 'not-held', ttlMs: 1_000 }),
  },
  {
    method: 'POST',
    pattern: '/api/locks/[resource]/release',
    path: () => '/api/locks/authz-x/release',
    permission: 'lock',
    body: () => ({ token: 'not-held' }),
    reply: releaseResponseSchema,
  },
  {
    method: 'POST',
    pattern: '/api/semaphores',
    path: () => '/api/semaphores',
    permission: 'lock',
    body: (who) => ({ resource: `authz-sem-${who}`, limit: 4, ttlMs: 2_000 }),
    reply: permitSchema,
  },
  {
    method: 'POST',
    pattern: '/api/semaphores/[resource]/extend',
    path: () => '/api/semaphores/authz-x/extend',
    permission: 'lock',
    body: () => ({ token: 'not-held', slots: [0], ttlMs: 1_000 }),
  },
  {
    method: 'POST',
    pattern: '/api/semaphores/[resource]/release',
    path: () => '/api/semaphores/authz-x/release',
    permission: 'lock',
    body: () => ({ token: 'not-held', slots: [0] }),
    reply: slotsReleaseResponseSchema,
  },
  {
    method: 'POST',
    pattern: '/api/rwlocks/[resource]/read',
    path: () => '/api/rwlocks/authz-read/read',
    permission: 'lock',
    body: () => ({ ttlMs: 2_000 }),
    reply: rwGrantSchema,
  },
  {
    method: 'POST',
    pattern: '/api/rwlocks/[resource]/write',
    path: (who) => `/api/rwlocks/authz-write-${who}/write`,
    permission: 'lock',
    body: () => ({ ttlMs: 2_000 }),
    reply: rwGrantSchema,
  },
  {
    method: 'POST',
    pattern: '/api/rwlocks/[resource]/extend',
    path: () => '/api/rwlocks/authz-x/extend',
    permission: 'lock',
    body: () => ({ token: 'not-held', slots: [0], ttlMs: 1_000 }),
  },
  {
    method: 'POST',
    pattern: '/api/rwlocks/[resource]/release',
    path: () => '/api/rwlocks/authz-x/release',
    permission: 'lock',
    body: () => ({ token: 'not-held', slots: [0] }),
    reply: slotsReleaseResponseSchema,
  },
  {
    method: 'GET',
    pattern: '/api/slot-locks',
    path: () => '/api/slot-locks',
    permission: 'read',
    reply: slotLockListResponseSchema,
  },
  {
    method: 'GET',
    pattern: '/api/slot-locks/[kind]/[resource]',
    path: () => '/api/slot-locks/semaphore/authz-x',
    permission: 'read',
    reply: slotLockDetailResponseSchema,
  },
  {
    method: 'GET',
    pattern: '/api/slot-locks/[kind]/[resource]/history',
    path: () => '/api/slot-locks/semaphore/authz-x/history?slots=0,1',
    permission: 'read',
    reply: slotHistoryResponseSchema,
  },
  {
    method: 'POST',
    pattern: '/api/slot-locks/[kind]/[resource]/force-release',
    path: () => '/api/slot-locks/semaphore/authz-x/force-release',
    permission: 'operate',
    body: () => ({ token: 'not-held', slot: 0, reason: 'authz matrix' }),
  },
  {
    method: 'POST',
    pattern: '/api/locks/[resource]/force-release',
    path: () => '/api/locks/authz-x/force-release',
    permission: 'operate',
    body: () => ({ token: 'not-held', reason: 'authz matrix', dryRun: true }),
    reply: forceReleaseResponseSchema,
  },
  {
    method: 'POST',
    pattern: '/api/force-release',
    path: () => '/api/force-release',
    permission: 'operate',
    body: () => ({ locks: [{ resource: 'authz-x', token: 'not-held' }], reason: 'authz matrix', dryRun: true }),
    reply: bulkForceReleaseResponseSchema,
  },
  { method: 'GET', pattern: '/api/events', path: () => '/api/events', permission: 'read' },
  { method: 'GET', pattern: '/api/audit', path: () => '/api/audit?limit=5', permission: 'read', reply: auditResponseSchema },
  { method: 'GET', pattern: '/api/metrics', path: () => '/api/metrics', permission: 'metrics' },
  { method: 'GET', pattern: '/api/history', path: () => '/api/history', permission: 'read', reply: historyResponseSchema },
  { method: 'GET', pattern: '/api/scenarios', path: () => '/api/scenarios', permission: 'read', reply: scenarioListSchema },
  {
    method: 'POST',
    pattern: '/api/scenarios/[id]/runs',
    path: () => '/api/scenarios/no-such/runs',
    permission: 'operate',
    body: () => ({}),
  },
  {
    method: 'GET',
    pattern: '/api/scenarios/runs/current',
    path: () => '/api/scenarios/runs/current',
    permission: 'read',
    reply: runResponseSchema,
  },
  {
    method: 'POST',
    pattern: '/api/scenarios/runs/current/[action]',
    path: () => '/api/scenarios/runs/current/pause',
    permission: 'operate',
    body: () => ({}),
  },
  { method: 'GET', pattern: '/api/chaos/report', path: () => '/api/chaos/report', permission: 'read', reply: chaosReportResponseSchema },
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
          if (res.status >= 400) expect(apiErrorSchema.safeParse(JSON.parse(text)).success, text).toBe(true);
          else if (r.reply) {
            const parsed = r.reply.safeParse(JSON.parse(text));
            expect(parsed.success, `${text.slice(0, 300)}\n${parsed.error?.message ?? ''}`).toBe(true);
          }
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
    const noToken = await api.call('POST', '/api/nodes/1/actions', {
      as: 'operator',
      body: { action: 'heal' },
      headers: { 'x-csrf-token': 'wrong' },
    });
    expect(noToken.status).toBe(403);
    const crossOrigin = await api.call('POST', '/api/nodes/1/actions', {
      as: 'operator',
      body: { action: 'heal' },
      headers: { origin: 'https://evil.example' },
    });
    expect(crossOrigin.status).toBe(403);
    expect(((await crossOrigin.json()) as { error: { code: string } }).error.code).toBe('CSRF');
  });

  it('names the lib/api schema of every JSON answer (the routes without one answer a stream, text, or only errors here)', () => {
    expect(ROUTES.filter((r) => !r.reply).map((r) => `${r.method} ${r.pattern}`)).toEqual([
      'POST /api/locks/[resource]/extend', // a token nobody holds: 409, checked against apiErrorSchema
      'POST /api/semaphores/[resource]/extend', // likewise
      'POST /api/rwlocks/[resource]/extend', // likewise
      'POST /api/slot-locks/[kind]/[resource]/force-release', // a token nobody holds: 409 before anything is written
      'GET /api/events', // text/event-stream: each event is lib/api/events.ts liveEventSchema
      'GET /api/metrics', // the Prometheus text format (promtool checks it, api-locks.test.ts)
      'POST /api/scenarios/[id]/runs', // an unknown scenario: 400
      'POST /api/scenarios/runs/current/[action]', // no run: 409
    ]);
  });

  it("the README's HTTP API table names every route (`METHOD /api/path/{param}`)", () => {
    const readme = readFileSync('README.md', 'utf8');
    const section = readme.slice(readme.indexOf('## HTTP API'), readme.indexOf('\n## ', readme.indexOf('## HTTP API') + 5));
    const missing = ROUTES.map((r) => `${r.method} ${r.pattern.replace(/\[(\w+)\]/g, '{$1}')}`).filter(
      (route) => !new RegExp(`\`${route.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[\`?]`).test(section),
    );
    expect(missing).toEqual([]);
  });

  it('lists every route file and method, and every route answered before Next.js (lock service, event stream, sign-in), in the table above', async () => {
    const files = routePatterns();
    const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
    const present: string[] = [...LOCK_SERVICE_ROUTES, ...EVENT_STREAM_ROUTES, ...AUTH_ROUTES].map((r) => `${r.method} ${r.pattern}`);
    for (const pattern of files) {
      const mod = (await import(/* @vite-ignore */ `../../app${pattern}/route.ts`)) as Record<string, unknown>;
      for (const m of methods) {
        if (typeof mod[m] !== 'function') continue;
        // One owner per route: a Next.js handler would never see a request the fast path answers.
        expect(present, `${m} ${pattern} is answered by the fast path and has a Next.js handler too`).not.toContain(`${m} ${pattern}`);
        present.push(`${m} ${pattern}`);
      }
    }
    expect(present.sort()).toEqual(ROUTES.map((r) => `${r.method} ${r.pattern}`).sort());
  });
});
