import { Agent } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockKey } from '@redlock-console/redlock';
import { API_KEY, METRICS_TOKEN } from '../support/api';
import { startTestCluster, uniquePrefix, waitFor, type TestCluster } from '../support/cluster';
import { send } from '../support/console-server';
import { startBalancer, type Balancer } from '../support/haproxy';
import { serviceEnv, startLockServiceProcess, tempDataDir, type LockServiceProcess } from '../support/lock-service-process';

/**
 * Two lock-service replicas behind the real HAProxy configuration (deploy/haproxy/haproxy.cfg),
 * clients contending for one resource through it, and one replica SIGKILLed under that load. The
 * clients may see errors (a request in flight on the dead replica is a 502) and go on through the
 * other replica; what must never happen: two clients that both believe they hold the lock at one
 * moment, a fence that does not increase from one holder to the next, or a lock the dead replica
 * granted that outlives its TTL. Seen to fail (by hand, a copy of this file): with the second
 * replica on masters of its own, "grant 10 (client 3) began while client 5 held the lock".
 */
const TTL_MS = 2_000;
const CLIENTS = 6;
const auth = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };

let cluster: TestCluster;
let data: ReturnType<typeof tempDataDir>;
let keyPrefix: string;
let services: LockServiceProcess[] = [];
let balancer: Balancer;

beforeAll(async () => {
  keyPrefix = uniquePrefix('failover');
  cluster = await startTestCluster({ nodes: 3, maxTtlMs: 5_000, keyPrefix });
  data = tempDataDir();
  const env = { ...serviceEnv(cluster, data.dir, 5_000), REDLOCK_KEY_PREFIX: keyPrefix, REDLOCK_TRUST_PROXY: '127.0.0.1' };
  services = await Promise.all([startLockServiceProcess(env), startLockServiceProcess(env)]);
  // No consoles here: their backend is down, the lock frontend is what is under test.
  balancer = await startBalancer({
    consoles: ['127.0.0.1:1', '127.0.0.1:2'],
    lockServices: [`127.0.0.1:${services[0]!.port}`, `127.0.0.1:${services[1]!.port}`],
  });
}, 90_000);

afterAll(async () => {
  await balancer?.stop();
  await Promise.all(services.map((s) => s.kill()));
  await cluster?.stop();
  data?.remove();
});

interface Held {
  /** When the client had the grant in hand, and the last moment it may believe it holds it (performance.now()). */
  from: number;
  until: number;
  fence: number;
  client: number;
}

/** Acquires waiting now on every replica, for the test client's key, from each one's metrics. */
async function waitingOnReplicas(): Promise<number> {
  let total = 0;
  for (const s of services) {
    const res = await send(`http://127.0.0.1:${s.port}`, 'GET', '/api/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    const line = res.body.split('\n').find((l) => l.startsWith('redlock_api_key_acquires_waiting{') && l.includes('key="test-client"'));
    total += line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
  }
  return total;
}

describe('a client that leaves a waiting acquire, behind HAProxy', () => {
  it('is seen to leave by the replica (option abortonclose): its acquire stops and nobody is granted the lock for it', async () => {
    const held = await send(balancer.locksUrl, 'POST', '/api/locks', { headers: auth, body: { resource: 'departed', ttlMs: 5_000 } });
    expect(held.status, held.body).toBe(200);
    const { token } = JSON.parse(held.body) as { token: string };
    // A second client waits for it through the balancer, then gives up (its socket closed).
    const leaving = new AbortController();
    const waiting = send(balancer.locksUrl, 'POST', '/api/locks', {
      headers: auth,
      body: { resource: 'departed', ttlMs: 5_000, waitMs: 4_900 },
      signal: leaving.signal,
    }).catch(() => 'left');
    await waitFor(async () => (await waitingOnReplicas()) === 1, 10_000, 'the acquire waiting on a replica');
    const left = performance.now();
    leaving.abort();
    expect(await waiting).toBe('left');
    // Without abortonclose HAProxy keeps the replica's side open: the acquire waits on (4.9 s, the
    // holder's lease is 5 s) and, once the lock is released, is granted a lock nobody will use.
    await waitFor(async () => (await waitingOnReplicas()) === 0, 3_000, 'the replica to see the client leave');
    console.info(`the replica saw the client leave after ${Math.round(performance.now() - left)} ms`);
    const released = await send(balancer.locksUrl, 'POST', '/api/locks/departed/release', { headers: auth, body: { token } });
    expect(JSON.parse(released.body)).toMatchObject({ released: true });
    const next = await send(balancer.locksUrl, 'POST', '/api/locks', { headers: auth, body: { resource: 'departed', ttlMs: 2_000 } });
    expect(next.status, next.body).toBe(200);
  }, 30_000);
});

describe('a lock-service replica killed under load, behind HAProxy', () => {
  it('never grants a lock twice, keeps fences increasing, and leaks nothing past its TTL', async () => {
    const held: Held[] = [];
    const errors = new Map<string, number>();
    let stop = false;
    let killedAt = Infinity;
    const client = async (id: number) => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      while (!stop) {
        const sent = performance.now();
        try {
          const res = await send(balancer.locksUrl, 'POST', '/api/locks', {
            agent,
            headers: auth,
            body: { resource: 'failover', ttlMs: TTL_MS, waitMs: 1_000 },
            timeoutMs: 10_000,
          });
          if (res.status !== 200) {
            const code = res.status === 409 || res.status === 503 ? `${res.status}` : `${res.status} ${res.body.slice(0, 80)}`;
            errors.set(code, (errors.get(code) ?? 0) + 1);
            continue;
          }
          const grant = JSON.parse(res.body) as { token: string; fence: number; validityMs: number };
          const from = performance.now();
          // Hold a moment, then release; the client believes it holds until its release is sent or its validity ends.
          await new Promise((r) => setTimeout(r, 5)); // work: the critical section
          const until = Math.min(performance.now(), sent + grant.validityMs);
          held.push({ from, until, fence: grant.fence, client: id });
          await send(balancer.locksUrl, 'POST', '/api/locks/failover/release', {
            agent,
            headers: auth,
            body: { token: grant.token },
            timeoutMs: 10_000,
          }).catch(() => undefined);
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
          errors.set(code, (errors.get(code) ?? 0) + 1);
        }
      }
      agent.destroy();
    };
    const running = Array.from({ length: CLIENTS }, (_, i) => client(i));
    await waitFor(() => held.length >= 30, 30_000, '30 grants before the kill');
    const beforeKill = held.length;
    killedAt = performance.now();
    await services[0]!.kill('SIGKILL');
    await waitFor(() => held.length >= beforeKill + 30, 30_000, '30 grants after the kill');
    stop = true;
    await Promise.all(running);

    // Mutual exclusion: sorted by when each was in hand, each ends before the next one begins.
    const ordered = [...held].sort((a, b) => a.from - b.from);
    for (let i = 1; i < ordered.length; i++) {
      const [prev, next] = [ordered[i - 1]!, ordered[i]!];
      expect(prev.until, `grant ${i} (client ${next.client}) began while client ${prev.client} held the lock`).toBeLessThanOrEqual(
        next.from,
      );
      expect(next.fence, `fence of grant ${i}`).toBeGreaterThan(prev.fence);
    }
    expect(ordered.filter((h) => h.from > killedAt).length).toBeGreaterThanOrEqual(30);
    console.info(
      `failover: ${held.length} grants (${held.length - beforeKill} after the kill); refusals and errors: ${JSON.stringify([...errors])}`,
    );
    // What the clients saw: contention and errors, never a 500.
    for (const code of errors.keys()) expect(code, `errors: ${JSON.stringify([...errors])}`).not.toMatch(/^500/);

    // Nothing leaked: once the last grant's TTL has passed, no master holds the lock key (a grant
    // the dead replica made and never answered expires with its TTL: a key written without one would stay).
    const key = lockKey(keyPrefix, 'failover');
    const nodes = [1, 2, 3].map((id) => cluster.client(id));
    await Promise.all(nodes.map((n) => n.connect()));
    await waitFor(
      async () => (await Promise.all(nodes.map((n) => n.exists(key)))).every((e) => e === 0),
      TTL_MS + 3_000,
      'the lock key gone from every master',
    );
  }, 90_000);
});
