import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { USERS, startApi, type ApiHarness } from '../support/api';
import { closeConsole, detachConsole, restartConsole } from '../support/console-process';

/**
 * Event streams kept delivering after their session
 * logged out, and a slow stream could make the server hold any amount for it.
 */

let api: ApiHarness;
beforeAll(async () => {
  // Not a test of node timeouts: 1 s, so that a busy machine's stall is not a master that did not answer.
  api = await startApi({ nodes: 3, nodeTimeoutMs: 1_000 });
});
afterAll(async () => {
  await api?.stop();
});

async function session(): Promise<Record<string, string>> {
  const res = await api.call('POST', '/api/auth/login', { body: USERS.viewer });
  const csrf = ((await res.json()) as { csrfToken: string }).csrfToken;
  return { cookie: res.headers.get('set-cookie')!.split(';')[0]!, 'x-csrf-token': csrf, origin: 'http://console.test' };
}

/** Read the stream until it ends or `timeoutMs` passes; the text read and whether it ended. */
async function readAll(
  body: ReadableStream<Uint8Array>,
  timeoutMs: number,
  onText: (text: string) => void = () => undefined,
): Promise<{ text: string; ended: boolean }> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) {
      await reader.cancel();
      return { text, ended: false };
    }
    const next = await Promise.race([reader.read(), new Promise<null>((r) => setTimeout(() => r(null), left))]);
    if (next === null) continue;
    if (next.done) return { text, ended: true };
    text += decoder.decode(next.value, { stream: true });
    onText(text);
  }
}

describe('event streams end with their session', () => {
  it('a logout in this process ends the stream at once', async () => {
    const s = await session();
    const res = await api.call('GET', '/api/events', { headers: s });
    expect(res.status).toBe(200);
    let sofar = '';
    const read = readAll(res.body!, 5_000, (text) => (sofar = text));
    await vi.waitFor(() => expect(sofar).toContain(': connected'), { timeout: 5_000 });
    const started = Date.now();
    expect((await api.call('POST', '/api/auth/logout', { body: {}, headers: s })).status).toBe(200);
    const { text, ended } = await read;
    expect(ended).toBe(true);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(text).toContain(': connected');
    expect(text).toContain('event: session-ended');
  });

  it('a logout in another console process ends it within the recheck interval', async () => {
    const s = await session();
    const res = await api.call('GET', '/api/events', { headers: s }); // served by process A
    const read = readAll(res.body!, 15_000);
    const a = await detachConsole();
    expect((await api.call('POST', '/api/auth/logout', { body: {}, headers: s })).status).toBe(200); // process B
    const started = Date.now();
    const { text, ended } = await read;
    expect(ended).toBe(true);
    expect(text).toContain('event: session-ended');
    expect(Date.now() - started).toBeLessThan(10_000);
    // A and B stop; the next test's console is a fresh one, whose modules a test's own import gets.
    await closeConsole(a);
    await restartConsole();
  });
});

describe('a slow stream', () => {
  it('is dropped with a resync hint instead of growing: the server never holds much more than 1 MiB for it', async () => {
    const s = await session();
    // A stream that follows one lock gets each of its events (a stream that follows everything gets
    // a summary past 64 a window, hub.ts): 5,000 events of ~350 bytes on it, ~1.7 MB in chunks of
    // ~64 KiB, so the stream is dropped because its reader fell behind, not for one oversized chunk.
    const res = await api.call('GET', '/api/events?resource=slow', { headers: s });
    const { getEventHub } = await import('../../lib/server/events');
    const detail = 'x'.repeat(200);
    for (let i = 0; i < 5_000; i++)
      getEventHub().publish({ type: 'lock.granted', at: Date.now(), resource: 'slow', detail, source: 'service' });
    const { text, ended } = await readAll(res.body!, 5_000); // ~5 MB published, nobody reading until now
    expect(ended).toBe(true);
    expect(text.length).toBeLessThan(1.1 * 1024 * 1024);
    expect(text.trimEnd().split('\n\n').at(-1)).toMatch(/^event: resync/);
    // Chunks went out before the drop: the queue filled up, chunk by chunk.
    expect(text.split('event: lock.granted').length - 1).toBeGreaterThan(1_000);
  });
});
