import Ajv2020 from 'ajv/dist/2020';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_ACTION_FILTERS, AUDIT_ACTIONS } from '../../lib/api/audit';
import { API_ROUTES } from '../../lib/api/routes';
import { EVENT_STREAM_ROUTES } from '../../lib/server/events/stream-route';
import { LOCK_SERVICE_ROUTES } from '../../lib/server/lock-service/routes';
import { API_KEY, routePatterns, startApi, type ApiHarness } from '../support/api';

/**
 * Issue 19, part 3: GET /api/openapi.json describes every route — generated from lib/api's route
 * list and zod schemas — and nothing else; live answers validate against the document's schemas.
 */
type Doc = {
  openapi: string;
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
    const existing: string[] = [...LOCK_SERVICE_ROUTES, ...EVENT_STREAM_ROUTES].map((r) => `${r.method} ${openApiPath(r.pattern)}`);
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
    const validate = (path: string, method: string, status: '200' | 'default', body: unknown) => {
      const op = doc.paths[path]![method]!;
      const schema = (op.responses[status] as { content: { 'application/json': { schema: object } } }).content['application/json'].schema;
      const check = ajv.compile(schema);
      expect(check(body), `${method.toUpperCase()} ${path} ${status}: ${ajv.errorsText(check.errors)}`).toBe(true);
    };
    const asClient = { authorization: `Bearer ${API_KEY}` };
    const granted = await api.call('POST', '/api/locks', { headers: asClient, body: { resource: 'openapi-x', ttlMs: 2_000 } });
    const grant = (await granted.json()) as { token: string };
    validate('/api/locks', 'post', '200', grant);
    const released = await api.call('POST', '/api/locks/openapi-x/release', { headers: asClient, body: { token: grant.token } });
    validate('/api/locks/{resource}/release', 'post', '200', await released.json());
    const refused = await api.call('POST', '/api/locks', { headers: asClient, body: { resource: 'openapi-x', ttlMs: 'soon' } });
    expect(refused.status).toBe(400);
    validate('/api/locks', 'post', 'default', await refused.json());
    validate('/api/health', 'get', '200', await (await api.call('GET', '/api/health')).json());
    // And a schema that must reject: a grant without its token.
    const op = doc.paths['/api/locks']!.post!;
    const grantSchema = (op.responses['200'] as { content: { 'application/json': { schema: object } } }).content['application/json'].schema;
    expect(ajv.compile(grantSchema)({ ...grant, token: undefined })).toBe(false);
  });

  it("lists the audit log's action filter from the one list of audit actions (every action, scenario.run included)", () => {
    const params = doc.paths['/api/audit']!.get!.parameters as Array<{ name: string; schema?: { enum?: string[] } }>;
    const action = params.find((p) => p.name === 'action');
    expect(action?.schema?.enum).toEqual(AUDIT_ACTION_FILTERS);
    for (const a of AUDIT_ACTIONS) expect(action?.schema?.enum).toContain(a);
  });
});
