import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type ApiHarness, type Who } from '../support/api';

let api: ApiHarness;
beforeAll(async () => {
  api = await startApi({ nodes: 3 });
});
afterAll(async () => {
  await api?.stop();
});

/** Every mutating route, with a path built from an arbitrary parameter. */
const MUTATING: Array<{ name: string; path: (param: string) => string; as: Who }> = [
  { name: 'login', path: () => '/api/auth/login', as: 'anonymous' },
  { name: 'logout', path: () => '/api/auth/logout', as: 'viewer' },
  { name: 'node action', path: (p) => `/api/nodes/${encodeURIComponent(p)}/actions`, as: 'operator' },
  { name: 'mark clean', path: (p) => `/api/nodes/${encodeURIComponent(p)}/mark-clean`, as: 'operator' },
  { name: 'acquire', path: () => '/api/locks', as: 'client' },
  { name: 'extend', path: (p) => `/api/locks/${encodeURIComponent(p)}/extend`, as: 'client' },
  { name: 'release', path: (p) => `/api/locks/${encodeURIComponent(p)}/release`, as: 'client' },
  { name: 'force-release', path: (p) => `/api/locks/${encodeURIComponent(p)}/force-release`, as: 'operator' },
];

// Node ids that exist are left out: a generated {"action":"crash"} must not take the cluster down mid-run.
const param = fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('0', '-1', '1.5', '99', 'NaN', '%', '..', ' ', 'a/b'));
const body = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  fc
    .record(
      {
        token: fc.string(),
        ttlMs: fc.oneof(fc.integer(), fc.double(), fc.string()),
        reason: fc.string(),
        resource: fc.string({ maxLength: 600 }),
        action: fc.string(),
        username: fc.string(),
        password: fc.string(),
      },
      { requiredKeys: [] },
    )
    .map((v) => JSON.stringify(v)),
  fc.string({ maxLength: 200 }),
);

describe('no client mistake is ever a 5xx', () => {
  for (const route of MUTATING) {
    it(`${route.name}: arbitrary JSON bodies and path params → 4xx or 2xx with a message`, async () => {
      await fc.assert(
        fc.asyncProperty(param, body, async (p, raw) => {
          const res = await api.call('POST', route.path(p), { as: route.as, rawBody: raw });
          expect(res.status, `${route.path(p)} ${raw} → ${res.status} ${await res.clone().text()}`).toBeLessThan(500);
          if (res.status >= 400 && res.status !== 404 && res.status !== 405) {
            // no such route: no JSON body, as in Next.js
            const json = (await res.json()) as { error?: { message?: string } };
            expect(json.error?.message).toBeTruthy();
          }
        }),
        { numRuns: 40 },
      );
    }, 60_000);
  }

  it('a body that is not JSON, or not declared as JSON, or too large, is a clear 4xx', async () => {
    const notJson = await api.call('POST', '/api/locks', { as: 'client', rawBody: '{"resource":' });
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as { error: { message: string } }).error.message).toMatch(/not valid JSON/);
    const wrongType = await api.call('POST', '/api/locks', { as: 'client', rawBody: 'x', headers: { 'content-type': 'text/plain' } });
    expect(wrongType.status).toBe(415);
    const huge = await api.call('POST', '/api/locks', {
      as: 'client',
      rawBody: JSON.stringify({ resource: 'x'.repeat(70_000), ttlMs: 1 }),
    });
    expect(huge.status).toBe(413);
  });

  it('unknown fields are rejected by name', async () => {
    const res = await api.call('POST', '/api/locks', { as: 'client', body: { resource: 'r', ttlMs: 1_000, ttl: 5, colour: 'red' } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/unknown field\(s\): ttl, colour/);
  });
});
