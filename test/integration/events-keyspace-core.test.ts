import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Redis } from 'ioredis';
import { Redlock } from '@redlock-console/redlock';
import type { LiveEvent } from '@/lib/api/events';
import { startKeyspaceSource } from '@/lib/server/events/keyspace-source';
import { NO_PERSISTENCE, startRedisNodes, type RedisNode } from '../support/redis-nodes';

/**
 * The lock core's real writes on real masters, as the live events read them (keyspace-source.ts),
 * on masters configured as the README says (`notify-keyspace-events Eg$x`): a fenced grant with
 * metadata (SET NX GET PX, then the fence round's SETRANGE), an extend (PEXPIRE GT, then
 * SETRANGE), a release (DEL) and a multi-resource grant and extend are one event per resource; an
 * extend that lengthens nothing (GT) is none; a lock held before the events started is extended,
 * not granted, at its next extension; and a lock whose keys vanished without a DEL (the masters
 * flushed) is granted at its next grant.
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

const ALL = [1, 2, 3];

/** The keyspace source on `sources` (the masters' clients by default): what it emitted, the nodes it gave up on, when it is ready, how to stop it. */
function startSource(sources: Redis[] = clients) {
  const events: LiveEvent[] = [];
  const unsupported: number[][] = [];
  const reasons: Array<Record<number, string>> = [];
  let ready!: () => void;
  const started = new Promise<void>((resolve) => (ready = resolve));
  const stop = startKeyspaceSource({
    clients: sources,
    keyPrefix: 'evc:',
    manageConfig: false,
    emit: (event) => events.push(event),
    onUnsupported: (bad, why) => {
      unsupported.push(bad);
      reasons.push(why);
    },
    onReady: ready,
  });
  return { events, unsupported, reasons, started, stop };
}

/** Take `resource` and release it; the grant must be the one event seen, listing `on`. */
async function grantSeen(events: LiveEvent[], resource: string, on: number[]): Promise<void> {
  const lock = await core.acquire(resource, 10_000);
  await vi.waitFor(() => expect(events.map((e) => [e.type, e.resource, e.nodes])).toEqual([['lock.granted', resource, on]]), {
    timeout: 5_000,
  });
  await (
    await lock.release()
  ).settled;
}

describe("live events from the lock core's writes", () => {
  it('a fenced grant, an extend, a release, a multi-resource grant and its extend are one event each (per resource); a lock held before the events began is extended, not granted', async () => {
    const before = await core.acquire('held-before', 30_000, { metadata: { purpose: 'events' } });
    const { events, unsupported, started, stop } = startSource();
    const seen = () => events.map((e) => [e.type, e.resource, [...(e.nodes ?? [])].sort()]);
    // Each step once every node's copy of the one before is in (a quorum answers the caller first:
    // a slow node's copy of the previous step must not cross the next one).
    const step = async (expected: unknown[][]) => {
      await vi.waitFor(() => expect(seen()).toEqual(expected), { timeout: 5_000 });
    };
    try {
      await started;
      expect(unsupported).toEqual([]);
      await before.extend(40_000);
      const log: unknown[][] = [['lock.extended', 'held-before', ALL]];
      await step(log);
      const lock = await core.acquire('invoice', 10_000, { metadata: { purpose: 'events' } });
      expect(lock.fence).not.toBeNull();
      log.push(['lock.granted', 'invoice', ALL]);
      await step(log);
      await lock.extend(20_000);
      log.push(['lock.extended', 'invoice', ALL]);
      await step(log);
      // Shorter than the lease left: PEXPIRE GT lengthens nothing, and the value's rewrite is no event.
      await lock.extend(1_000);
      await (
        await lock.release()
      ).settled;
      log.push(['lock.released', 'invoice', ALL]);
      await step(log);
      // Its keys gone without a DEL (FLUSHALL publishes no keyevent per key): the next grant is one.
      const wiped = await core.acquire('wiped', 10_000);
      log.push(['lock.granted', 'wiped', ALL]);
      await step(log);
      await Promise.all(clients.map((c) => c.flushall()));
      await core.markNodesClean();
      const again = await core.acquire('wiped', 10_000);
      expect(again.token).not.toBe(wiped.token);
      log.push(['lock.granted', 'wiped', ALL]);
      await step(log);
      await (
        await again.release()
      ).settled;
      log.push(['lock.released', 'wiped', ALL]);
      await step(log);
      const many = await core.acquire(['a', 'b'], 10_000);
      await vi.waitFor(() => expect(seen()).toHaveLength(log.length + 2), { timeout: 5_000 });
      await many.extend(20_000);
      await vi.waitFor(() => expect(seen()).toHaveLength(log.length + 4), { timeout: 5_000 });
      await (
        await many.release()
      ).settled;
      await vi.waitFor(() => expect(seen()).toHaveLength(log.length + 6), { timeout: 5_000 });
      // A moment for any extra event (a rewrite taken for a change would come with its own).
      // absence: 150 ms for any extra event (a rewrite taken for a change would come with its own)
      await new Promise((r) => setTimeout(r, 150));
      const rest = seen().slice(log.length);
      expect(seen().slice(0, log.length)).toEqual(log);
      // The two resources of one grant may be grouped in either order.
      const json = (list: unknown[][]) => list.map((e) => JSON.stringify(e)).sort();
      expect(json(rest)).toEqual(
        json([
          ['lock.granted', 'a', ALL],
          ['lock.granted', 'b', ALL],
          ['lock.extended', 'a', ALL],
          ['lock.extended', 'b', ALL],
          ['lock.released', 'a', ALL],
          ['lock.released', 'b', ALL],
        ]),
      );
    } finally {
      stop();
      await (
        await before.release()
      ).settled;
    }
  });

  it("subscribes again when a node's subscriber connection drops, and reads on", async () => {
    const { events, started, stop } = startSource();
    try {
      await started;
      // The node drops every subscriber connection (a restart, a proxy, `CLIENT KILL`).
      expect(await clients[0]!.client('KILL', 'TYPE', 'pubsub')).toBeGreaterThan(0);
      await vi.waitFor(
        async () => expect(Number(((await clients[0]!.pubsub('NUMSUB', '__keyevent@0__:set')) as [string, number])[1])).toBe(1),
        {
          timeout: 5_000,
        },
      );
      await grantSeen(events, 'after-reconnect', ALL);
    } finally {
      stop();
    }
  });

  it('a node that refuses the subscription (an ACL user without channel permissions) is polled instead, at once', async () => {
    // Redis 7 gives a new ACL user no channel permissions: its CONFIG GET works, its SUBSCRIBE is NOPERM.
    await clients[2]!.call('ACL', 'SETUSER', 'no-channels', 'on', '>no-channels-pw', '~*', '+@all', 'resetchannels');
    const restricted = new Redis(nodes[2]!.url.replace('redis://', 'redis://no-channels:no-channels-pw@'));
    const t0 = Date.now();
    const { events, unsupported, reasons, started, stop } = startSource([clients[0]!, clients[1]!, restricted]);
    try {
      await started;
      expect(Date.now() - t0).toBeLessThan(2_000);
      expect(unsupported).toEqual([[3]]);
      // The log says why (index.ts): the node's refusal, not a guess.
      expect(reasons[0]![3]).toMatch(/SUBSCRIBE refused: NOPERM/);
      await grantSeen(events, 'refused-node', [1, 2]);
    } finally {
      stop();
      restricted.disconnect();
      await clients[2]!.call('ACL', 'DELUSER', 'no-channels');
    }
  });
});
