import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY, USERS, startApi, type ApiHarness } from '../support/api';

/**
 * Issue 18, finding 3: a chunked body was read whole before the size check (200 MB → 413 after the
 * server grew by 430 MB; 600 MB → 500). Every route that reads a body must refuse it while it
 * streams, and never hold more than the limit.
 */

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
const ROUTE_FILES = import.meta.glob<Record<string, Handler>>('../../app/api/**/route.ts');
const LIMIT = 64 * 1024;
const CHUNK = 64 * 1024;
/** Path parameters every route accepts, so that the body is what gets checked. */
const PARAMS = { resource: 'body-limit', id: '1', action: 'pause' };

let api: ApiHarness;
let session: { cookie: string; csrf: string };
beforeAll(async () => {
  api = await startApi({ nodes: 3 });
  const res = await api.call('POST', '/api/auth/login', { body: USERS.operator });
  session = { cookie: res.headers.get('set-cookie')!.split(';')[0]!, csrf: ((await res.json()) as { csrfToken: string }).csrfToken };
});
afterAll(async () => {
  await api?.stop();
});

/** A chunked body of `total` bytes, made only as it is read; `pulled()` says how much was. */
function endlessBody(total: number) {
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (pulled >= total) return controller.close();
        const chunk = new Uint8Array(Math.min(CHUNK, total - pulled)).fill(0x20); // spaces: valid JSON whitespace
        pulled += chunk.byteLength;
        controller.enqueue(chunk);
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, pulled: () => pulled };
}

function post(path: string, body: ReadableStream<Uint8Array>, headers: Record<string, string>): Request {
  return new Request(`http://console.test${path}`, {
    method: 'POST',
    body,
    duplex: 'half',
    headers: { host: 'console.test', 'content-type': 'application/json', ...headers },
  } as RequestInit);
}

const asOperator = () => ({ cookie: session.cookie, 'x-csrf-token': session.csrf, origin: 'http://console.test' });

function bodyRoutes(): Array<{ path: string; params: Record<string, string>; load: () => Promise<Record<string, Handler>> }> {
  return Object.entries(ROUTE_FILES).map(([file, load]) => {
    const params: Record<string, string> = {};
    const path = file
      .replace('../../app', '')
      .replace(/\/route\.ts$/, '')
      .replace(/\[(\w+)\]/g, (_, p: keyof typeof PARAMS) => (params[p] = PARAMS[p]));
    return { path, params, load };
  });
}

describe('body limits, enforced while the body streams', () => {
  it('every POST route refuses a chunked body over the limit after reading at most the limit', async () => {
    let checked = 0;
    for (const { path, params, load } of bodyRoutes()) {
      const handler = (await load()).POST;
      if (!handler) continue;
      const body = endlessBody(8 * 1024 * 1024);
      const headers =
        path.startsWith('/api/locks') && !path.endsWith('force-release') ? { authorization: `Bearer ${API_KEY}` } : asOperator();
      const res = await handler(post(path, body.stream, headers), { params: Promise.resolve(params) });
      expect(res.status, `${path}: ${await res.clone().text()}`).toBe(413);
      expect(res.headers.get('connection')).toBe('close');
      expect(body.pulled(), path).toBeLessThanOrEqual(LIMIT + CHUNK);
      checked++;
    }
    expect(checked).toBeGreaterThanOrEqual(10);
  });

  it('a declared Content-Length over the limit is refused before a byte is read', async () => {
    const body = endlessBody(1024 * 1024);
    const handler = (await ROUTE_FILES['../../app/api/auth/login/route.ts']!()).POST!;
    const res = await handler(post('/api/auth/login', body.stream, { 'content-length': String(1024 * 1024) }), {
      params: Promise.resolve({}),
    });
    expect(res.status).toBe(413);
    expect(body.pulled()).toBe(0);
  });

  it('an anonymous 256 MB chunked login body is a 413 without the process growing by more than a few MB', async () => {
    const handler = (await ROUTE_FILES['../../app/api/auth/login/route.ts']!()).POST!;
    // Warm up (module loading, first allocations), then measure.
    await handler(post('/api/auth/login', endlessBody(2 * LIMIT).stream, {}), { params: Promise.resolve({}) });
    global.gc?.();
    const before = process.memoryUsage().rss;
    const body = endlessBody(256 * 1024 * 1024);
    const res = await handler(post('/api/auth/login', body.stream, {}), { params: Promise.resolve({}) });
    const grown = process.memoryUsage().rss - before;
    expect(res.status).toBe(413);
    expect(grown).toBeLessThan(8 * 1024 * 1024);
    expect(body.pulled()).toBeLessThanOrEqual(LIMIT + CHUNK);
  });

  it('bodies within the limit still work, chunked or not', async () => {
    const handler = (await ROUTE_FILES['../../app/api/locks/route.ts']!()).POST!;
    const json = new TextEncoder().encode(JSON.stringify({ resource: 'body-limit-ok', ttlMs: 1_000 }));
    const chunked = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < json.length; i += 7) controller.enqueue(json.slice(i, i + 7));
        controller.close();
      },
    });
    const res = await handler(post('/api/locks', chunked, { authorization: `Bearer ${API_KEY}` }), { params: Promise.resolve({}) });
    expect(res.status, await res.clone().text()).toBe(200);
    const near = await api.call('POST', '/api/auth/login', {
      rawBody: JSON.stringify({ ...USERS.viewer, pad: undefined }) + ' '.repeat(LIMIT - 100),
    });
    expect(near.status).toBe(200);
  });
});
