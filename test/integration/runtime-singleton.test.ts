import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestCluster, type TestCluster } from '../support/cluster';

let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startTestCluster({ nodes: 3 });
  process.env.REDLOCK_NODES = cluster.urls.join(',');
  process.env.REDLOCK_MODE = 'external';
});
afterAll(async () => {
  const { getRuntime } = await import('../../lib/server/runtime');
  for (const c of getRuntime().clients) c.disconnect();
  await cluster.stop();
});

describe('server runtime', () => {
  it('survives a dev hot reload: re-evaluated modules reuse the same connections, none leak', async () => {
    const first = (await import('../../lib/server/runtime')).getRuntime();
    expect(first.mode).toBe('external');
    expect(first.clients).toHaveLength(3);
    const probe = cluster.client(1);
    await probe.connect();
    await vi.waitFor(async () => expect(first.clients.every((c) => c.status === 'ready')).toBe(true));
    const before = Number(/connected_clients:(\d+)/.exec(await probe.info('clients'))![1]);

    vi.resetModules(); // what next dev does to changed modules
    const second = (await import('../../lib/server/runtime')).getRuntime();
    expect(second).toBe(first);
    // absence: 100 ms in which the second import must open no connection
    await new Promise((r) => setTimeout(r, 100));
    const after = Number(/connected_clients:(\d+)/.exec(await probe.info('clients'))![1]);
    expect(after).toBe(before);
  });

  it("reads its settings through lib/config: a bad value is the unconfigured runtime's problem, and the drift is the core's", async () => {
    const { createRuntime } = await import('../../lib/server/runtime');
    const { DEFAULT_SETTINGS } = await import('@redlock-console/redlock');
    expect(createRuntime({}).problem).toMatch(/No masters configured/);
    const bad = createRuntime({ REDLOCK_NODES: cluster.urls.join(','), REDLOCK_KEY_PREFIX: 'has space' });
    expect(bad).toMatchObject({ mode: 'unconfigured', clients: [] });
    expect(bad.problem).toMatch(/REDLOCK_KEY_PREFIX must be/);
    expect(createRuntime({ REDLOCK_MAX_TTL_MS: 'soon' }).problem).toMatch(/REDLOCK_MAX_TTL_MS must be a whole number/);
    expect(createRuntime({}).driftFactor).toBe(DEFAULT_SETTINGS.driftFactor);
  });

  it('readiness: a flood of requests costs each master one PING per period, and a crashed one is counted out after it', async () => {
    const { readiness, READINESS_CACHE_MS } = await import('../../lib/server/readiness');
    const admin = [1, 2, 3].map((id) => cluster.client(id));
    await Promise.all(admin.map((a) => a.connect()));
    const pings = async () => {
      let total = 0;
      for (const a of admin) total += Number(/cmdstat_ping:calls=(\d+)/.exec(await a.info('commandstats'))?.[1] ?? 0);
      return total;
    };
    // pace: past the readiness cache's period, so the next reading pings
    await new Promise((r) => setTimeout(r, READINESS_CACHE_MS + 50));
    const before = await pings();
    const answers = await Promise.all(Array.from({ length: 200 }, () => readiness()));
    expect(answers.every((a) => a.ready && a.up === 3 && a.quorum === 2 && a.nodes === 3)).toBe(true);
    expect((await pings()) - before).toBe(3);
    await cluster.supervisor.crash(3);
    try {
      expect((await readiness()).up).toBe(3); // the reading of this period
      // pace: past the readiness cache's period, so the crash is read
      await new Promise((r) => setTimeout(r, READINESS_CACHE_MS + 50));
      expect(await readiness()).toMatchObject({ ready: true, up: 2 });
    } finally {
      await cluster.supervisor.start(3);
      for (const a of admin) a.disconnect();
    }
  });

  it('lists every node as its clients see it, and a partitioned one as down', async () => {
    const { listNodes } = await import('../../lib/server/nodes-service');
    const healthy = await listNodes();
    expect(healthy.quorum).toBe(2);
    expect(healthy.nodes.map((n) => n.up)).toEqual([true, true, true]);
    await cluster.supervisor.crash(2);
    const degraded = await listNodes();
    expect(degraded.nodes.map((n) => n.up)).toEqual([true, false, true]);
    expect(degraded.nodes[1]!.error).toBeTruthy();
  });
});
