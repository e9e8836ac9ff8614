import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterHealth, clusterVerdict, nodeHealth, type HealthOptions } from '@/lib/inspect';
import { EPOCH_FIELDS, markNodeClean, nodeTimeMs, serverRunId } from '@redlock-console/redlock';
import { epochKey } from '@redlock-console/redlock';
import { startTestCluster, uniquePrefix, type TestCluster } from '../support/cluster';

let cluster: TestCluster;
let clients: Redis[];
const options: HealthOptions = { keyPrefix: 'rl:', maxTtlMs: 60_000, driftFactor: 0.01, quarantineEnabled: true };

beforeAll(async () => {
  cluster = await startTestCluster({ nodes: 5, persistence: ['none', 'aof-always', 'aof-everysec', 'aof-always', 'aof-always'] });
  clients = [1, 2, 3, 4, 5].map((id) => cluster.client(id));
});
afterAll(async () => {
  await cluster?.stop();
});

describe('node health on real redis-server', () => {
  it('reads setup, RTT and clock, and judges persistence', async () => {
    const healths = await clusterHealth(clients, options);
    for (const h of healths) {
      expect(h).toMatchObject({ up: true, error: null, role: 'master', maxmemoryPolicy: 'noeviction', configReadable: true, usable: true });
      expect(h.version).toMatch(/^\d+\.\d+\.\d+/);
      expect(h.rttMs).toBeGreaterThan(0);
      expect(h.rttMs).toBeLessThan(500);
      expect(Math.abs(h.clockOffsetMs!)).toBeLessThan(50); // same host, same clock
      expect(h.uptimeMs).toBeGreaterThanOrEqual(0);
      expect(typeof h.notifyKeyspaceEvents).toBe('string');
      expect(h.quarantine).toMatchObject({ state: 'clean', origin: 'fresh data directory', message: 'clean' });
    }
    expect(healths.map((h) => h.persistence?.mode)).toEqual(['none', 'aof-always', 'aof-everysec', 'aof-always', 'aof-always']);
    expect(healths[0]!.verdict.level).toBe('warn');
    expect(healths[0]!.verdict.reasons[0]).toMatch(/persistence none: restarts lose locks; the quarantine keeps it from voting/);
    expect(healths[1]!.verdict).toEqual({ level: 'ok', reasons: [] });
    expect(healths[2]!.verdict).toEqual({
      level: 'warn',
      reasons: [expect.stringMatching(/appendfsync everysec: a crash can lose the last second/)],
    });
    // Without the quarantine a `none` node is unsafe.
    const bare = await nodeHealth(clients[0]!, 1, { ...options, quarantineEnabled: false });
    expect(bare.verdict.level).toBe('unsafe');
    expect(clusterVerdict(healths, 5)).toMatchObject({ canGrant: true, usable: 5, up: 5, quorum: 3 });
  });

  it('flags evicting memory policies as unsafe', async () => {
    await clients[3]!.config('SET', 'maxmemory-policy', 'allkeys-lru');
    await clients[4]!.config('SET', 'maxmemory-policy', 'volatile-lru');
    try {
      const [four, five] = await Promise.all([nodeHealth(clients[3]!, 4, options), nodeHealth(clients[4]!, 5, options)]);
      expect(four.maxmemoryPolicy).toBe('allkeys-lru');
      expect(four.verdict.level).toBe('unsafe');
      expect(four.verdict.reasons[0]).toMatch(
        /^maxmemory-policy allkeys-lru can evict held locks, the epoch sentinel or the fence register: the lock core refuses its votes \(unsafe-eviction\)/,
      );
      expect(five.verdict.level).toBe('unsafe');
      expect(five.verdict.reasons[0]).toMatch(/volatile-lru can evict held locks/);
      // The lock core votes against them whatever their quarantine: they are not usable.
      expect([four.usable, five.usable]).toEqual([false, false]);
      expect(four.refusal).toMatchObject({ reason: 'unsafe-eviction' });
    } finally {
      await clients[3]!.config('SET', 'maxmemory-policy', 'noeviction');
      await clients[4]!.config('SET', 'maxmemory-policy', 'noeviction');
    }
  });

  it('reads the quarantine from the epoch sentinel: missing after a `none` restart, clean when marked, and time left', async () => {
    await cluster.supervisor.restart(1);
    const lost = await nodeHealth(clients[0]!, 1, options);
    expect(lost.up).toBe(true);
    expect(lost.quarantine).toMatchObject({ state: 'unknown', until: null, message: 'unknown: will be quarantined at the next acquire' });
    expect(lost.usable).toBe(false); // the next acquire quarantines it: its vote will not count
    const others = await clusterHealth(clients.slice(1), options);
    const afterRestart = clusterVerdict([lost, ...others], 5);
    expect(afterRestart).toMatchObject({ canGrant: true, usable: 4 });
    expect(afterRestart.reasons).toContain('node 1 has no epoch sentinel: the next acquire will quarantine it for maxTtl');

    await markNodeClean(clients[0]!, { keyPrefix: 'rl:', maxTtlMs: 60_000 });
    expect((await nodeHealth(clients[0]!, 1, options)).quarantine).toMatchObject({ state: 'clean', origin: 'clean' });

    // A quarantine written the way the acquire script writes it, under a prefix of this test's own.
    const p = uniquePrefix('quarantine');
    const now = await nodeTimeMs(clients[0]!);
    await clients[0]!.hset(epochKey(p), {
      [EPOCH_FIELDS.createdAt]: now,
      [EPOCH_FIELDS.quarantineUntil]: now + 20_000,
      [EPOCH_FIELDS.maxTtlMs]: 60_000,
      [EPOCH_FIELDS.origin]: 'quarantine',
      [EPOCH_FIELDS.runId]: await serverRunId(clients[0]!),
    });
    await markNodeClean(clients[1]!, { keyPrefix: p, maxTtlMs: 60_000 });
    await markNodeClean(clients[2]!, { keyPrefix: p, maxTtlMs: 60_000 });
    const healths = await clusterHealth(clients, { ...options, keyPrefix: p });
    expect(healths[0]!.quarantine!.state).toBe('quarantined');
    expect(healths[0]!.quarantine!.remainingMs).toBeGreaterThan(15_000);
    expect(healths[0]!.quarantine!.remainingMs).toBeLessThanOrEqual(20_000);
    expect(healths[0]!.quarantine!.message).toMatch(/^quarantined until \d{4}-.*Z \(\d+\.\d s left\)$/);
    expect(healths.map((h) => h.quarantine!.state)).toEqual(['quarantined', 'clean', 'clean', 'unknown', 'unknown']);
    const verdict = clusterVerdict(healths, 5);
    expect(verdict).toMatchObject({ canGrant: false, usable: 2 });
    expect(verdict.grantableInMs).toBeGreaterThan(15_000);
    // With the quarantine off, the sentinel does not keep any node from voting.
    expect(clusterVerdict(await clusterHealth(clients, { ...options, keyPrefix: p, quarantineEnabled: false }), 5).canGrant).toBe(true);
  });

  it('degrades gracefully when CONFIG is refused (managed Redis)', async () => {
    const user = `inspector-${randomBytes(3).toString('hex')}`;
    await clients[1]!.call('ACL', 'SETUSER', user, 'on', '>secret', '~*', '&*', '+@all', '-config');
    try {
      const limited = cluster.client(2, { username: user, password: 'secret' });
      const h = await nodeHealth(limited, 2, options);
      expect(h).toMatchObject({ up: true, configReadable: false, maxmemoryPolicy: 'noeviction', notifyKeyspaceEvents: null });
      expect(h.persistence).toMatchObject({ mode: 'aof', aofEnabled: true, appendfsync: null });
      expect(h.verdict.level).toBe('warn');
      expect(h.verdict.reasons.join('\n')).toMatch(/CONFIG is refused/);
    } finally {
      await clients[1]!.call('ACL', 'DELUSER', user);
    }
  });

  it('a replica is unsafe and not usable', async () => {
    const primary = cluster.supervisor.node(4);
    await clients[2]!.call('REPLICAOF', primary.host, String(primary.port));
    try {
      const h = await nodeHealth(clients[2]!, 3, options);
      expect(h.role).toBe('slave');
      expect(h.usable).toBe(false);
      expect(h.verdict.level).toBe('unsafe');
      expect(h.verdict.reasons[0]).toMatch(/a replica/);
    } finally {
      await clients[2]!.call('REPLICAOF', 'NO', 'ONE');
    }
  });

  it('a down or frozen node answers `up: false` within the timeout', async () => {
    await cluster.supervisor.crash(5);
    await cluster.supervisor.pause(4);
    try {
      const started = performance.now();
      const [frozen, down] = await Promise.all([
        nodeHealth(clients[3]!, 4, { ...options, timeoutMs: 400 }),
        nodeHealth(clients[4]!, 5, { ...options, timeoutMs: 400 }),
      ]);
      expect(performance.now() - started).toBeLessThan(1_000);
      expect(frozen).toMatchObject({ up: false, usable: false, rttMs: null, quarantine: null });
      expect(frozen.error).toMatch(/timed out|not connected/);
      expect(down.up).toBe(false);
      expect(down.error).toBeTruthy();
      expect(down.verdict.reasons[0]).toMatch(/^unreachable/);
      const verdict = clusterVerdict([frozen, down], 5);
      expect(verdict.reasons).toContain(`node 5 is down: ${down.error}`);
    } finally {
      await cluster.supervisor.resume(4);
      await cluster.supervisor.restart(5);
    }
  });
});
