import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Redis } from 'ioredis';
import { Redlock } from '@redlock-console/redlock';
import type { LiveEvent } from '@/lib/api/events';
import { startKeyspaceSource } from '@/lib/server/events/keyspace-source';
import { NO_PERSISTENCE, startRedisNodes, type RedisNode } from '../support/redis-nodes';

/**
 * The lock core's real writes on real masters, as the live events read them (keyspace-source.ts):
 * a fenced grant with metadata (SET NX GET PX, then the fence round's SET XX KEEPTTL), an extend
 * (PEXPIRE GT, then SET KEEPTTL), a release (DEL), and a multi-resource grant (acquire.lua) are one
 * event each, on the masters configured as the README says (`notify-keyspace-events Eg$x`). And
 * the source reads only the channels that say something: no master sends it a `set` (issue 18:
 * the grant's and the fence round's `set` were a quarter of what a fenced lock made every master
 * deliver to each console).
 */

let nodes: RedisNode[] = [];
let clients: Redis[] = [];
let core: Redlock;
beforeAll(async () => {
  nodes = await startRedisNodes(() => [...NO_PERSISTENCE, '--notify-keyspace-events', 'Eg$x'], 3);
  clients = nodes.map((n) => new Redis(n.url));
  core = new Redlock(
    nodes.map((n) => n.url),
    { keyPrefix: 'evc:', maxTtlMs: 60_000 },
  );
  await core.markNodesClean();
});
afterAll(async () => {
  await core?.quit();
  for (const c of clients) c.disconnect();
  await Promise.all(nodes.map((n) => n.stop()));
});

describe("live events from the lock core's writes", () => {
  it('a fenced grant, an extend, a release and a multi-resource grant are one event each, and no master sends a set', async () => {
    const events: LiveEvent[] = [];
    let ready!: () => void;
    const started = new Promise<void>((resolve) => (ready = resolve));
    const stop = startKeyspaceSource({
      clients,
      keyPrefix: 'evc:',
      manageConfig: false,
      groupMs: 20,
      emit: (event) => events.push(event),
      onUnsupported: (bad) => expect.fail(`nodes ${bad.join(', ')} reported without notifications`),
      onReady: ready,
    });
    try {
      await started;
      for (const n of nodes) {
        const [, setSubscribers] = (await n.client.pubsub('NUMSUB', '__keyevent@0__:set')) as [string, number];
        expect(setSubscribers).toBe(0);
        const [, expireSubscribers] = (await n.client.pubsub('NUMSUB', '__keyevent@0__:expire')) as [string, number];
        expect(expireSubscribers).toBe(1);
      }
      const lock = await core.acquire('invoice', 10_000, { metadata: { purpose: 'events' } });
      expect(lock.fence).not.toBeNull();
      await lock.extend(20_000);
      await (
        await lock.release()
      ).settled;
      const many = await core.acquire(['a', 'b'], 10_000);
      await (
        await many.release()
      ).settled;
      const all = [1, 2, 3];
      const expected = [
        ['lock.granted', 'invoice', all],
        ['lock.extended', 'invoice', all],
        ['lock.released', 'invoice', all],
        ['lock.granted', 'a', all],
        ['lock.granted', 'b', all],
        ['lock.released', 'a', all],
        ['lock.released', 'b', all],
      ];
      await vi.waitFor(() => expect(events.length).toBeGreaterThanOrEqual(expected.length), { timeout: 5_000 });
      // A moment for any extra event (a rewrite taken for a change would come with its own).
      await new Promise((r) => setTimeout(r, 100));
      const seen = events.map((e) => [e.type, e.resource, [...e.nodes!].sort()]);
      expect(seen).toHaveLength(expected.length);
      // The two resources of one grant may be grouped in either order.
      expect(seen.slice(0, 3)).toEqual(expected.slice(0, 3));
      expect(new Set(seen.slice(3).map((e) => JSON.stringify(e)))).toEqual(new Set(expected.slice(3).map((e) => JSON.stringify(e))));
    } finally {
      stop();
    }
  });
});
