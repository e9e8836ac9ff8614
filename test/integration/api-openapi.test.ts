import Ajv2020 from 'ajv/dist/2020';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_ACTION_FILTERS, AUDIT_ACTIONS } from '../../lib/api/audit';
import { API_ROUTES } from '../../lib/api/routes';
import { AUTH_ROUTES } from '../../lib/server/auth-routes/routes';
import { EVENT_STREAM_ROUTES } from '../../lib/server/events/stream-route';
import { LOCK_SERVICE_ROUTES } from '../../lib/server/lock-service/routes';
import { API_KEY, routePatterns, startApi, type ApiHarness } from '../support/api';

/**
 * GET /api/openapi.json describes every route — generated from lib/api's route
 * list and zod schemas — and nothing else; live answers validate against the document's schemas.
 */
type Doc = {
  openapi: string;
  components: Record<string, unknown>;
  tags: Array<{ name: string; description?: string }>;
  paths: Record<
    string,
    Record<string, { summary: string; tags: string[]; parameters: Array<{ name: string; in: string }>; responses: Record<string, unknown> }>
  >;
};

let api: ApiHarness;
let doc: Doc;

beforeAll(async () => {
  api = await startApi({ nodes: 3 });
  const res = await api.call('GET', '/api/openapi.json'); // anonymous: it holds no data
  expect(res.status).toBe(200);
  doc = (await res.json()) as Doc;
});
afterAll(async () => {
  await api?.stop();
});

/** `/api/locks/[resource]/extend` → `/api/locks/{resource}/extend`. */
const openApiPath = (pattern: string) => pattern.replace(/\[(\w+)\]/g, '{$1}');

describe('the OpenAPI document', () => {
  it('is OpenAPI 3.1 and describes every route that exists (route files and the fast path), with a summary, and no other', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const existing: string[] = [...LOCK_SERVICE_ROUTES, ...EVENT_STREAM_ROUTES, ...AUTH_ROUTES].map(
      (r) => `${r.method} ${openApiPath(r.pattern)}`,
    );
    for (const pattern of routePatterns()) {
      const mod = (await import(/* @vite-ignore */ `../../app${pattern}/route.ts`)) as Record<string, unknown>;
      for (const m of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'])
        if (typeof mod[m] === 'function') existing.push(`${m} ${openApiPath(pattern)}`);
    }
    const described = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    expect(described.sort()).toEqual(existing.sort());
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        expect(op.summary.length, `${method} ${path}`).toBeGreaterThan(10);
        // Every {placeholder} of the path is a path parameter, and nothing else is.
        const placeholders = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
        expect(
          op.parameters.filter((p) => p.in === 'path').map((p) => p.name),
          `${method} ${path}`,
        ).toEqual(placeholders);
        expect(op.responses['200'], `${method} ${path}`).toBeDefined();
      }
    }
    expect(API_ROUTES.length).toBe(described.length);
  });

  it('groups the operations by tags that each say what they are for (the API reference page shows them)', () => {
    const used = new Set(Object.values(doc.paths).flatMap((ops) => Object.values(ops).flatMap((op) => op.tags)));
    expect(doc.tags.map((t) => t.name).sort()).toEqual([...used].sort());
    for (const tag of doc.tags) expect(tag.description?.length ?? 0, tag.name).toBeGreaterThan(30);
  });

  it('live answers validate against the schemas it gives them (grant, release, error, health)', async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    // A schema with the document's components beside it, so `#/components/schemas/…` resolves.
    const schemaOf = (path: string, method: string, status: string) => {
      const op = doc.paths[path]![method]!;
      const response = op.responses[status] as { content: { 'application/json': { schema: object } } } | undefined;
      expect(response, `${method.toUpperCase()} ${path} declares ${status}`).toBeDefined();
      return { ...response!.content['application/json'].schema, components: doc.components };
    };
    const validate = (path: string, method: string, status: string, body: unknown) => {
      const check = ajv.compile(schemaOf(path, method, status));
      expect(check(body), `${method.toUpperCase()} ${path} ${status}: ${ajv.errorsText(check.errors)}`).toBe(true);
    };
    const asClient = { authorization: `Bearer ${API_KEY}` };
    const granted = await api.call('POST', '/api/locks', { headers: asClient, body: { resource: 'openapi-x', ttlMs: 2_000 } });
    const grant = (await granted.json()) as { token: string };
    validate('/api/locks', 'post', '200', grant);
    // The error answers an acquire really gives, each declared with the schema it is sent with.
    const contended = await api.call('POST', '/api/locks', { headers: asClient, body: { resource: 'openapi-x', ttlMs: 2_000 } });
    expect(contended.status).toBe(409);
    validate('/api/locks', 'post', '409', await contended.json());
    const released = await api.call('POST', '/api/locks/openapi-x/release', { headers: asClient, body: { token: grant.token } });
    validate('/api/locks/{resource}/release', 'post', '200', await released.json());
    const refused = await api.call('POST', '/api/locks', { headers: asClient, body: { resource: 'openapi-x', ttlMs: 'soon' } });
    expect(refused.status).toBe(400);
    validate('/api/locks', 'post', '400', await refused.json());
    const both = await api.call('POST', '/api/locks', { headers: asClient, body: { resource: 'a', resources: ['b'], ttlMs: 1_000 } });
    expect(both.status).toBe(400);
    expect(ajv.compile(schemaOf('/api/locks', 'post', '400'))(await both.json())).toBe(true);
    // …and the request the server refused, the document's request schema refuses too.
    const acquireRequest = (
      doc.paths['/api/locks']!.post as unknown as { requestBody: { content: { 'application/json': { schema: object } } } }
    ).requestBody.content['application/json'].schema;
    const request = ajv.compile({ ...acquireRequest, components: doc.components });
    expect(request({ resource: 'a', ttlMs: 1_000 })).toBe(true);
    expect(request({ resource: 'a', resources: ['b'], ttlMs: 1_000 })).toBe(false);
    expect(request({ ttlMs: 1_000 })).toBe(false);
    expect(request({ resource: 'a', ttlMs: api.maxTtlMs + 1 })).toBe(false);
    const overCeiling = await api.call('POST', '/api/locks', {
      headers: asClient,
      body: { resource: 'openapi-y', ttlMs: api.maxTtlMs + 1 },
    });
    expect(overCeiling.status).toBe(400);
    validate('/api/locks', 'post', '400', await overCeiling.json());
    const anonymous = await api.call('POST', '/api/locks', { body: { resource: 'openapi-x', ttlMs: 2_000 } });
    expect(anonymous.status).toBe(401);
    validate('/api/locks', 'post', '401', await anonymous.json());
    const notJson = await api.call('POST', '/api/locks', { headers: { ...asClient, 'content-type': 'text/plain' }, rawBody: 'x' });
    expect(notJson.status).toBe(415);
    validate('/api/locks', 'post', '415', await notJson.json());
    const viewerOnly = await api.call('POST', '/api/nodes/1/mark-clean', { headers: asClient, body: {} });
    expect(viewerOnly.status).toBe(403);
    validate('/api/nodes/{id}/mark-clean', 'post', '403', await viewerOnly.json());
    validate('/api/health', 'get', '200', await (await api.call('GET', '/api/health')).json());
    // And a schema that must reject: a grant without its token.
    expect(ajv.compile(schemaOf('/api/locks', 'post', '200'))({ ...grant, token: undefined })).toBe(false);
  });

  it("lists the audit log's action filter from the one list of audit actions (every action, scenario.run included)", () => {
    const params = doc.paths['/api/audit']!.get!.parameters as Array<{ name: string; schema?: { enum?: string[] } }>;
    const action = params.find((p) => p.name === 'action');
    expect(action?.schema?.enum).toEqual(AUDIT_ACTION_FILTERS);
    for (const a of AUDIT_ACTIONS) expect(action?.schema?.enum).toContain(a);
  });
});
