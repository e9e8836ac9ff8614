import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestCluster, type TestCluster } from '../support/cluster';

const run = promisify(execFile);

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
  it('a dev hot reload evaluates Next.js’s shims of lib/server again, never lib/server itself: the same runtime, no new connection', async () => {
    // The console's process holds one copy of lib/server, its server's; Next.js holds shims that
    // import it (next.config.ts, scripts/support/node-copy-loader.mjs). Node evaluates a module URL
    // once, so a reload's shims get the same module, and its state (the runtime's connections)
    // needs no holder on globalThis. Without the rule, Next.js's own copy would be evaluated again.
    const child = await run(
      process.execPath,
      ['--import', 'tsx', '--import', './scripts/support/server-only-hook.mjs', 'test/support/dev-reload.mjs'],
      {
        env: { ...process.env, LOG_LEVEL: 'silent' },
      },
    );
    const result = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as {
      sameRuntime: boolean[];
      before: number;
      after: number;
      shim: string;
    };
    expect(result.shim).toContain('import(/* turbopackIgnore: true */');
    expect(result.sameRuntime).toEqual([true, true]);
    expect(result.after).toBe(result.before);
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
    // The runtime's connections up first: a reading while they connect would count them out.
    const { getRuntime } = await import('../../lib/server/runtime');
    await vi.waitFor(() => expect(getRuntime().clients.every((c) => c.status === 'ready')).toBe(true));
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
