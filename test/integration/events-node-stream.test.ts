import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { matchEventStream } from '../../lib/server/events/stream-route';
import { startApi, type ApiHarness } from '../support/api';

/**
 * GET /api/events answered on Node's request and response before Next.js
 * (lib/server/events/node-stream.ts), as the console's server does: the same checks, headers and
 * errors as a Next.js route, and a stream whose resources go with its socket. (Its session and
 * backpressure rules: security-events.test.ts; who may open it: api-authz.test.ts.)
 */

let api: ApiHarness;
beforeAll(async () => {
  api = await startApi({ nodes: 3 });
});
afterAll(async () => {
  await api?.stop();
});

const hub = async () => (await import('../../lib/server/events')).getEventHub();

/** Read `body` until `until` matches the text read so far (or `timeoutMs` passes); the reader stays open. */
async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, until: RegExp, timeoutMs = 5_000): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  const deadline = Date.now() + timeoutMs;
  while (!until.test(text)) {
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`no ${until} within ${timeoutMs} ms; read: ${text.slice(0, 300)}`);
    const next = await Promise.race([reader.read(), new Promise<null>((r) => setTimeout(() => r(null), left))]);
    if (next === null) continue;
    if (next.done) throw new Error(`the stream ended before ${until}; read: ${text.slice(0, 300)}`);
    text += decoder.decode(next.value, { stream: true });
  }
  return text;
}

const SECURITY = {
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
};

describe('GET /api/events before Next.js', () => {
  it('opens with the API security headers, says connected after subscribing, then delivers what is published', async () => {
    const res = await api.call('GET', '/api/events', { as: 'viewer' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store, no-transform');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(Object.fromEntries(Object.keys(SECURITY).map((h) => [h, res.headers.get(h)]))).toEqual(SECURITY);
    expect(res.headers.get('strict-transport-security')).toBeNull();
    const reader = res.body!.getReader();
    await readUntil(reader, /: connected \d+\n\n/);
    (await hub()).publish({ type: 'lock.granted', at: Date.now(), resource: 'node-stream', nodes: [1, 2], source: 'service' });
    const text = await readUntil(reader, /event: lock\.granted\n/);
    const data = /event: lock\.granted\ndata: (.*)\n\n/.exec(text)![1]!;
    expect(JSON.parse(data)).toMatchObject({ type: 'lock.granted', resource: 'node-stream', nodes: [1, 2] });
    await reader.cancel();
  });

  it('HSTS behind an https proxy', async () => {
    const res = await api.call('GET', '/api/events', { as: 'viewer', headers: { 'x-forwarded-proto': 'https' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('strict-transport-security')).toBe('max-age=31536000');
    await res.body!.cancel();
  });

  it('a stream closed by its client leaves nothing subscribed (its timers and hub listener go with the socket)', async () => {
    // The streams of the tests before closed with their sockets too.
    await vi.waitFor(async () => expect((await hub()).size).toBe(0), { timeout: 10_000 });
    const res = await api.call('GET', '/api/events?resource=gone', { as: 'viewer' });
    const reader = res.body!.getReader();
    await readUntil(reader, /: connected/);
    expect((await hub()).size).toBe(1);
    await reader.cancel();
    await vi.waitFor(async () => expect((await hub()).size).toBe(0), { timeout: 10_000 });
  });

  it('refuses bad requests with the API errors and headers: anonymous 401, bad query 400, other methods 405', async () => {
    const anonymous = await api.call('GET', '/api/events');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('content-type')).toBe('application/json');
    expect(anonymous.headers.get('x-frame-options')).toBe('DENY');
    expect(((await anonymous.json()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');

    const unknown = await api.call('GET', '/api/events?since=5', { as: 'viewer' });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toMatch(/since/);
    const empty = await api.call('GET', '/api/events?resource=', { as: 'viewer' });
    expect(empty.status).toBe(400);
    expect(((await empty.json()) as { error: { message: string } }).error.message).toMatch(/resource/);

    const post = await api.call('POST', '/api/events', { as: 'operator', body: {} });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('OPTIONS, GET');
    expect(((await post.json()) as { error: { code: string } }).error.code).toBe('METHOD_NOT_ALLOWED');
    const options = await api.call('OPTIONS', '/api/events');
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')).toBe('OPTIONS, GET');
    expect(options.headers.get('x-frame-options')).toBe('DENY');
    expect(options.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(options.headers.get('strict-transport-security')).toBeNull();
    const tls = await api.call('OPTIONS', '/api/events', { headers: { 'x-forwarded-proto': 'https' } });
    expect(tls.headers.get('strict-transport-security')).toBe('max-age=31536000');
  });

  it('matches the path exactly, in origin or absolute form, whatever the query', () => {
    expect(matchEventStream('/api/events')).toBe(true);
    expect(matchEventStream('/api/events?resource=a%2Fb')).toBe(true);
    expect(matchEventStream('http://console.example/api/events?resource=x')).toBe(true);
    expect(matchEventStream('/api/eventsx')).toBe(false);
    expect(matchEventStream('/api/events/x')).toBe(false);
    expect(matchEventStream('/api/event')).toBe(false);
    expect(matchEventStream('/API/events')).toBe(false);
    expect(matchEventStream('http://[bad')).toBe(false);
    expect(matchEventStream(undefined)).toBe(false);
  });
});
