import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Redis } from 'ioredis';
import { lockKey } from '@redlock-console/redlock';
import type { LiveEvent } from '@/lib/api/events';
import { startKeyspaceSource } from '@/lib/server/events/keyspace-source';
import { NO_PERSISTENCE, startRedisNodes, type RedisNode } from '../support/redis-nodes';

/**
 * The live events' subscription names the exact keyevent channels of the lock keys' database
 * (patterns cost the masters a match per pattern on every notification they publish).
 * So a lock in that database is an event, and a key of the same name in another database is not.
 */

let nodes: RedisNode[] = [];
let clients: Redis[] = [];
beforeAll(async () => {
  nodes = await startRedisNodes(() => [...NO_PERSISTENCE, '--notify-keyspace-events', 'KEA'], 2);
  clients = nodes.map((n) => new Redis(`${n.url}/3`));
});
afterAll(async () => {
  for (const c of clients) c.disconnect();
  await Promise.all(nodes.map((n) => n.stop()));
});

describe('live events from keyspace notifications', () => {
  it("follow the lock keys' database only", async () => {
    const events: LiveEvent[] = [];
    let ready!: () => void;
    const started = new Promise<void>((resolve) => (ready = resolve));
    const stop = startKeyspaceSource({
      clients,
      keyPrefix: 'ev:',
      manageConfig: false,
      groupMs: 20,
      emit: (event) => events.push(event),
      onUnsupported: () => undefined,
      onReady: ready,
    });
    try {
      await started;
      const key = lockKey('ev:', 'db-check');
      // The same key in database 0 (another application's keyspace): not ours.
      for (const n of nodes) await n.client.set(key, 'other-db', 'PX', 5_000, 'NX');
      for (const c of clients) await c.set(key, 'token {}', 'PX', 5_000, 'NX');
      for (const c of clients) await c.del(key);
      // Both events out (a loaded machine may take a while), then a moment for any extra one.
      await vi.waitFor(() => expect(events.length).toBeGreaterThanOrEqual(2), { timeout: 5_000 });
      // absence: 100 ms for a third event that must not come (both expected ones are in)
      await new Promise((r) => setTimeout(r, 100));
      expect(events.map((e) => [e.type, e.resource, e.nodes])).toEqual([
        ['lock.granted', 'db-check', [1, 2]],
        ['lock.released', 'db-check', [1, 2]],
      ]);
    } finally {
      stop();
    }
  });
});
