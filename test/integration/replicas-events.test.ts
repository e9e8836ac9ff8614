import { request, type ClientRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liveEventSchema, type LiveEvent } from '../../lib/api/events';
import type { LockGrant } from '../../lib/api/locks';
import { waitFor } from '../support/cluster';
import {
  CLIENT_AUTH,
  send,
  signIn,
  startConsoleCluster,
  type ConsoleCluster,
  type ConsoleProcess,
  type ProcessSession,
} from '../support/console-server';

/**
 * The event stream (GET /api/events) of one console shows what was done through another on the
 * same masters. The masters' own reports (keyspace notifications) reach every console by
 * themselves; the events a console publishes itself (`source: 'service'`) crossed to no other:
 * a force-release (`lock.force-released`) and a node its lock core quarantined (`node.quarantined`)
 * were seen only on the console that did it. (`node.action`, a scenario's node action, is published
 * the same way, by the one console that runs scenarios: replicas-leases.test.ts.)
 */

let cc: ConsoleCluster;
let a: ConsoleProcess;
let b: ConsoleProcess;
let operator: ProcessSession;
beforeAll(async () => {
  cc = await startConsoleCluster({ nodes: 3, maxTtlMs: 10_000 });
  // A master's answer may take a while on a busy two-core host: 1 s, not 100 ms.
  a = await cc.start({ REDLOCK_INSTANCE: 'console-a', REDLOCK_NODE_TIMEOUT_MS: '1000' });
  b = await cc.start({ REDLOCK_INSTANCE: 'console-b', REDLOCK_NODE_TIMEOUT_MS: '1000' });
  operator = await signIn(a.url, 'operator');
}, 180_000);
afterAll(async () => {
  await cc?.stop();
});

/** An open GET /api/events on `c`: every event it has sent so far. */
async function openStream(c: ConsoleProcess, session: ProcessSession): Promise<{ events: LiveEvent[]; close(): void }> {
  const events: LiveEvent[] = [];
  let text = '';
  let connected = false;
  let req: ClientRequest;
  await new Promise<void>((resolve, reject) => {
    req = request(`${c.url}/api/events`, { headers: session.headers(c.url) }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`GET /api/events: ${res.statusCode}`));
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        let end;
        while ((end = text.indexOf('\n\n')) >= 0) {
          const block = text.slice(0, end);
          text = text.slice(end + 2);
          if (block.split('\n').some((l) => l.startsWith(': connected'))) connected = true;
          const data = block.split('\n').find((l) => l.startsWith('data: '));
          const parsed = data ? liveEventSchema.safeParse(JSON.parse(data.slice(6))) : null;
          if (parsed?.success) events.push(parsed.data);
        }
      });
      res.on('error', () => undefined);
    });
    req.on('error', reject);
    req.end();
    void waitFor(() => connected, 15_000, 'the stream to say connected').then(resolve, reject);
  });
  return { events, close: () => req.destroy() };
}

describe("one console's event stream shows what was done through the other", () => {
  it("a force-release through A reaches the stream of B, naming A, and A's own stream once", async () => {
    const streamB = await openStream(b, await signIn(b.url, 'viewer'));
    const streamA = await openStream(a, await signIn(a.url, 'viewer'));
    try {
      const taken = await send(a.url, 'POST', '/api/locks', { headers: CLIENT_AUTH, body: { resource: 'rep-ev-1', ttlMs: 8_000 } });
      expect(taken.status, taken.body).toBe(200);
      const { token } = JSON.parse(taken.body) as LockGrant;
      // The masters' own report of the grant reaches B by itself (notifications or polling), not from A.
      await waitFor(() => streamB.events.some((e) => e.type === 'lock.granted' && e.resource === 'rep-ev-1'), 10_000, 'the grant on B');
      expect(streamB.events.find((e) => e.type === 'lock.granted')!.source).not.toBe('service');
      expect(streamB.events.find((e) => e.type === 'lock.granted')!.instance).toBeUndefined();
      const forced = await send(a.url, 'POST', '/api/locks/rep-ev-1/force-release', {
        headers: { ...operator.headers(a.url), 'content-type': 'application/json' },
        body: { token, reason: 'replica events', confirmLiveHolder: true },
      });
      expect(forced.status, forced.body).toBe(200);
      await waitFor(
        () => streamB.events.some((e) => e.type === 'lock.force-released' && e.resource === 'rep-ev-1'),
        10_000,
        "A's force-release on B's stream",
      );
      const event = streamB.events.find((e) => e.type === 'lock.force-released')!;
      expect(event).toMatchObject({ source: 'service', instance: 'console-a', detail: 'op' });
      // A's own stream: its event as its own (no instance), and not again off the masters' channel.
      await waitFor(() => streamA.events.some((e) => e.type === 'lock.force-released'), 10_000, "the force-release on A's stream");
      // absence: 1.5 s (six batch windows) for a second copy that must not come back from the channel
      await new Promise((r) => setTimeout(r, 1_500));
      const own = streamA.events.filter((e) => e.type === 'lock.force-released' && e.resource === 'rep-ev-1');
      expect(own).toHaveLength(1);
      expect(own[0]!.instance).toBeUndefined();
    } finally {
      streamB.close();
      streamA.close();
    }
  });

  it("a node A's lock core quarantines is on B's stream, naming A", async () => {
    const streamB = await openStream(b, await signIn(b.url, 'viewer'));
    try {
      // Node 3 restarts without persistence (the cluster runs with none): its data, the epoch
      // sentinel included, is gone; A's next acquires find it so and quarantine it.
      await cc.cluster.supervisor.act(3, { action: 'restart' });
      await waitFor(
        async () => {
          const res = await send(a.url, 'POST', '/api/locks', { headers: CLIENT_AUTH, body: { resource: 'rep-ev-2', ttlMs: 1_000 } });
          if (res.status === 200) {
            const { token } = JSON.parse(res.body) as LockGrant;
            await send(a.url, 'POST', '/api/locks/rep-ev-2/release', { headers: CLIENT_AUTH, body: { token } });
          }
          return streamB.events.some((e) => e.type === 'node.quarantined' && e.node === 3);
        },
        20_000,
        "A's quarantine of node 3 on B's stream",
      );
      expect(streamB.events.find((e) => e.type === 'node.quarantined')).toMatchObject({
        source: 'service',
        instance: 'console-a',
        node: 3,
      });
    } finally {
      streamB.close();
    }
  });
});
