import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Redis } from 'ioredis';
import type { LiveEvent } from '@/lib/api/events';
import { startKeyspaceSource } from '@/lib/server/events/keyspace-source';
import { NO_PERSISTENCE, startRedisNodes, type RedisNode } from '../support/redis-nodes';

/**
 * A node that does not answer in time when the live events start (a busy machine: every first
 * CONFIG GET timed out on all five masters) was polled for as long as the console ran, and the
 * activity chart said it publishes no notifications. It is tried again and, once subscribed, no
 * longer polled; a node that refuses (notifications off, not ours to turn on) is not retried.
 */

let nodes: RedisNode[] = [];
let clients: Redis[] = [];
beforeAll(async () => {
  // Nodes 1 and 2 publish keyevents; node 3 does not (and the source may not turn them on).
  nodes = await startRedisNodes((i) => (i < 2 ? [...NO_PERSISTENCE, '--notify-keyspace-events', 'Eg$x'] : NO_PERSISTENCE), 3);
  clients = nodes.map((n) => new Redis(n.url));
  await Promise.all(clients.map((c) => c.ping()));
});
afterAll(async () => {
  for (const c of clients) c.disconnect();
  await Promise.all(nodes.map((n) => n.stop()));
});

describe('a node whose first subscription timed out', () => {
  it('is polled, tried again, and subscribed once it answers; a node that refuses is not tried again', async () => {
    // Node 2 holds every command for 1.5 s: the source's first subscription there times out.
    await clients[1]!.call('CLIENT', 'PAUSE', '1500', 'ALL');
    const events: LiveEvent[] = [];
    const unsupported: Array<{ nodes: number[]; reasons: Record<number, string> }> = [];
    const subscribed: number[] = [];
    let ready!: () => void;
    const started = new Promise<void>((resolve) => (ready = resolve));
    const stop = startKeyspaceSource({
      clients,
      keyPrefix: 'evr:',
      manageConfig: false,
      emit: (event) => events.push(event),
      onUnsupported: (bad, reasons) => unsupported.push({ nodes: bad, reasons }),
      onSubscribed: (node) => subscribed.push(node),
      onReady: ready,
      firstSubscribeMs: 500,
      retryMs: 200,
    });
    // Node 3's CONFIG GETs so far: it is read once as the source starts (a refusal), never again.
    const configCalls = async () => Number(/cmdstat_config\|get:calls=(\d+)/.exec(await clients[2]!.info('commandstats'))?.[1] ?? 0);
    try {
      await started;
      const node3Calls = await configCalls();
      expect(unsupported).toHaveLength(1);
      expect(unsupported[0]!.nodes).toEqual([2, 3]);
      expect(unsupported[0]!.reasons[3]).toMatch(/notify-keyspace-events/);
      // Once the pause is over, a retry subscribes node 2 and says so.
      await vi.waitFor(() => expect(subscribed).toEqual([2]), { timeout: 10_000, interval: 50 });
      // Its notifications now arrive: a lock key written on node 2 alone is an event.
      await vi.waitFor(
        async () => {
          await clients[1]!.set('evr:lock:after-retry', 'tok', 'PX', 10_000);
          expect(events.some((e) => e.resource === 'after-retry' && e.nodes?.includes(2))).toBe(true);
        },
        { timeout: 5_000, interval: 200 },
      );
      // Node 3 refused (its configuration, not its speed): never tried again. Node 2 was retried
      // every 200 ms from the end of its first 500 ms until its 1.5 s pause ended, so at least
      // four retry periods passed between these two readings without a read of node 3.
      expect(await configCalls()).toBe(node3Calls);
      expect(subscribed).toEqual([2]);
    } finally {
      stop();
    }
  });
});
