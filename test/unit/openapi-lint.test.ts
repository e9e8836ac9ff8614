import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../../lib/api/openapi';
import { OPERATION_ERRORS } from '../../lib/api/route-errors';
import { API_ROUTES } from '../../lib/api/routes';

/**
 * The OpenAPI document as an adopter's tools read it. Redocly CLI lints it (the
 * recommended rules, redocly.yaml) with no warning at all; openapi-typescript generates a client's
 * types from it, and a small acquire/extend/release program compiles against them with tsc, while
 * the mistakes the contract forbids (both or neither of resource/resources, an unknown error code)
 * do not compile.
 */
const root = join(import.meta.dirname, '..', '..');
const bin = (name: string) => join(root, 'node_modules', '.bin', name);
const dir = mkdtempSync(join(tmpdir(), 'redlock-openapi-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Json = Record<string, unknown>;
type Operation = { responses: Record<string, { content?: Record<string, { schema?: Json }>; headers?: Json }> };
const doc = openApiDocument({ version: '0.1.0', maxTtlMs: 60_000 }) as {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Json> };
};
const docFile = join(dir, 'openapi.json');
writeFileSync(docFile, JSON.stringify(doc, null, 2));

const run = (command: string, args: string[]) =>
  spawnSync(command, args, {
    cwd: dir,
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
  });

describe('the OpenAPI document under real tools', () => {
  it('passes `redocly lint` (recommended rules) with no error and no warning', () => {
    const lint = run(bin('redocly'), ['lint', docFile, '--config', join(root, 'redocly.yaml'), '--format=json']);
    const report = JSON.parse(lint.stdout.slice(lint.stdout.indexOf('{'))) as {
      totals: { errors: number; warnings: number };
      problems: Array<{ ruleId: string; message: string; location: Array<{ pointer: string }> }>;
    };
    const problems = report.problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);
    expect(problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    expect(lint.status, lint.stderr).toBe(0);
  });

  it('generates client types with openapi-typescript that an acquire/extend/release program compiles against', () => {
    const gen = run(bin('openapi-typescript'), [docFile, '-o', join(dir, 'api.d.ts')]);
    expect(gen.status, gen.stderr).toBe(0);
    writeFileSync(join(dir, 'client.ts'), CLIENT);
    const tsc = run(process.execPath, [
      join(root, 'node_modules', 'typescript', 'bin', 'tsc'),
      ...['--noEmit', '--strict', '--skipLibCheck', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext'],
      ...['--lib', 'es2022,dom', 'client.ts'],
    ]);
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
  });
});

describe('what the document declares', () => {
  const op = (path: string, method: string) => doc.paths[path]![method]!;
  const statuses = (path: string, method: string) => Object.keys(op(path, method).responses);

  it("declares every operation's error answers, each body the one ApiError schema of components", () => {
    for (const route of API_ROUTES) {
      const declared = statuses(route.path, route.method.toLowerCase());
      const where = `${route.method} ${route.path}`;
      if (route.params || route.query || route.body) expect(declared, where).toContain('400');
      if (route.access !== 'anyone') expect(declared, where).toEqual(expect.arrayContaining(['401', '403']));
      if (route.body) expect(declared, where).toEqual(expect.arrayContaining(['413', '415']));
      for (const [status, response] of Object.entries(op(route.path, route.method.toLowerCase()).responses)) {
        if (status === '200' || route.path === '/api/ready') continue;
        expect(response.content?.['application/json']?.schema, `${where} ${status}`).toEqual({ $ref: '#/components/schemas/ApiError' });
      }
    }
    // Named once in components, referenced everywhere.
    expect(doc.components.schemas.ApiError).toMatchObject({ type: 'object', required: ['error'] });
    expect(JSON.stringify(doc.paths)).not.toContain('"INTERNAL"');
    // Per-operation statuses name routes that exist.
    const routes = new Set(API_ROUTES.map((r) => `${r.method} ${r.path}`));
    for (const key of Object.keys(OPERATION_ERRORS)) expect(routes.has(key), key).toBe(true);
  });

  it('declares the lock service as it answers: contention, expiry, quota with Retry-After, outage', () => {
    expect(statuses('/api/locks', 'post').sort()).toEqual(['200', '400', '401', '403', '409', '413', '415', '429', '503', 'default']);
    expect(op('/api/locks', 'post').responses['429']!.headers).toHaveProperty('Retry-After');
    expect(statuses('/api/locks/{resource}/extend', 'post')).toEqual(expect.arrayContaining(['409', '503']));
    expect(statuses('/api/auth/login', 'post')).toEqual(expect.arrayContaining(['401', '429']));
    expect(statuses('/api/nodes/{id}/mark-clean', 'post')).toEqual(expect.arrayContaining(['404', '409', '503']));
    expect(statuses('/api/health', 'get')).toEqual(['200', 'default']);
  });

  it('encodes "exactly one of resource/resources" and the lease ceiling on ttlMs', () => {
    const acquire = doc.components.schemas.AcquireRequest as { oneOf: Json[]; properties: Record<string, Json> };
    expect(acquire.oneOf).toEqual([
      { required: ['resource'], properties: { resource: {}, resources: false } },
      { required: ['resources'], properties: { resources: {}, resource: false } },
    ]);
    expect(acquire.properties.ttlMs).toMatchObject({ type: 'integer', maximum: 60_000 });
    expect((doc.components.schemas.ExtendRequest as { properties: Record<string, Json> }).properties.ttlMs).toMatchObject({
      maximum: 60_000,
    });
    const other = openApiDocument({ version: '0', maxTtlMs: 5_000 }) as typeof doc;
    expect((other.components.schemas.AcquireRequest as { properties: Record<string, Json> }).properties.ttlMs).toMatchObject({
      maximum: 5_000,
    });
  });
});

/** A client's program, as an adopter writes one against the generated types. */
const CLIENT = `import type { components, paths } from './api.js';

type Acquire = paths['/api/locks']['post'];
type Extend = paths['/api/locks/{resource}/extend']['post'];
type Release = paths['/api/locks/{resource}/release']['post'];
type AcquireBody = Acquire['requestBody']['content']['application/json'];
type Grant = Acquire['responses'][200]['content']['application/json'];
type ApiError = components['schemas']['ApiError'];

async function post<T>(base: string, key: string, path: string, body: unknown): Promise<T> {
  const res = await fetch(base + path, {
    method: 'POST',
    headers: { authorization: 'Bearer ' + key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) {
    const problem = (await res.json()) as ApiError;
    throw new Error(problem.error.code + ': ' + problem.error.message);
  }
  return (await res.json()) as T;
}

export async function withLock(base: string, key: string): Promise<boolean> {
  const body: AcquireBody = { resource: 'jobs:nightly', ttlMs: 10_000, waitMs: 500, metadata: { owner: 'cron' } };
  const grant = await post<Grant>(base, key, '/api/locks', body);
  const path = '/api/locks/' + encodeURIComponent(grant.resources[0]!);
  const extendBody: Extend['requestBody']['content']['application/json'] = { token: grant.token, ttlMs: 10_000 };
  const extended = await post<Extend['responses'][200]['content']['application/json']>(base, key, path + '/extend', extendBody);
  const releaseBody: Release['requestBody']['content']['application/json'] = { token: extended.token };
  const released = await post<Release['responses'][200]['content']['application/json']>(base, key, path + '/release', releaseBody);
  const contended: Acquire['responses'][409]['content']['application/json']['error']['code'] = 'LOCK_CONTENDED';
  const outage: Acquire['responses'][503]['content']['application/json'] = { error: { code: 'QUORUM_UNAVAILABLE', message: 'no quorum' } };
  return released.released && grant.fence !== undefined && contended.length > 0 && outage.error.code !== 'INTERNAL';
}

// @ts-expect-error both resource and resources
export const both: AcquireBody = { resource: 'a', resources: ['b'], ttlMs: 1_000 };
// @ts-expect-error neither resource nor resources
export const neither: AcquireBody = { ttlMs: 1_000 };
// @ts-expect-error ttlMs is a number of milliseconds
export const late: AcquireBody = { resource: 'a', ttlMs: '1s' };
// @ts-expect-error an error code the API never answers
export const unknown: ApiError['error']['code'] = 'NOPE';
`;
