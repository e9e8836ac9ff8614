import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, expect, it, vi } from 'vitest';
import { EventHub } from '@/lib/server/events/hub';
import { captureRootContext } from '@/lib/server/root-context';

// The live events' sources (Redis subscriptions, timers) were started inside the async
// context of the request that opened the first stream, so they ran in it for good: Next.js's
// per-request state stayed reachable and each Date.now() in their callbacks paid its request checks.

captureRootContext(); // as scripts/console-server.ts does before it serves anything

describe('the event sources', () => {
  it('start outside the async context of the request that opened the first stream', async () => {
    const request = new AsyncLocalStorage<string>();
    const seen: Array<string | undefined> = [];
    const hub = new EventHub((_emit, ready) => {
      seen.push(request.getStore());
      // What a source's socket or timer callback later sees.
      const timer = setTimeout(() => seen.push(request.getStore()), 5);
      ready();
      return () => clearTimeout(timer);
    });
    const stop = request.run('GET /api/events #1', () => hub.subscribeEncoded(() => undefined));
    await vi.waitFor(() => expect(seen).toHaveLength(2)); // the source's start, then its timer
    expect(seen).toEqual([undefined, undefined]);
    stop();
  });
});
