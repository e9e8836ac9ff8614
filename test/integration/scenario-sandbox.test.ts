import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redlock, type Lock } from '@redlock-console/redlock';
import type { NodeAction } from '@/lib/api/node-actions';
import type { RunResponse, RunView, ScenarioId, ScenarioList } from '@/lib/api/scenarios';
import { SANDBOX_CONTROL_ENV, type NodeStatus } from '@/lib/cluster';
import { FaultProxy } from '@/lib/faults';
import { scenarioById, ScenarioRun } from '@/lib/scenarios';
import { runIdOf } from '@/lib/scenarios/separation';
import { startApi, type ApiHarness } from '../support/api';
import { restartConsole } from '../support/console-process';

/**
 * Scenarios crashed, paused and slowed the masters that hold applications' locks (during
 * eleven runs, locks held from code were lost or refused ~80 times). They now run on the teaching
 * sandbox, masters started for them (lib/cluster/sandbox.ts, as `npm start` starts it).
 *
 * While every scenario that acts on nodes runs through the console's own routes, locks held from
 * code with the package on the main masters are extended every 300 ms and a fresh lock is taken
 * and released every 250 ms: none may be lost, refused or changed, and the main masters' processes
 * and keys stay as they were. The scenarios left out (1 quorum, 5 client pause, 10 delayed write)
 * take no node action: their only commands are their clients' lock commands and the engine's reads,
 * on the nodes ScenarioCluster.open got from the same sandbox channel as the others'.
 *
 * Then the attacks: the sandbox's channel pointed at the main supervisor (refused by address before
 * any command), and a run handed main masters behind other addresses (refused by run_id).
 */

const FAULTING: ScenarioId[] = [
  'minority-failure',
  'restart-without-persistence',
  'delayed-restart',
  'split-vote',
  'slow-network',
  'clock-drift',
  'restart-from-snapshot',
  'efficiency-vs-correctness',
  'restored-from-backup',
  'semaphore-restart',
];
const HELD = 12;

let api: ApiHarness;
let app: Redlock;
let direct: Redis[];
beforeAll(async () => {
  // No reading pause between steps: the runs' node actions are what this test is about, not their pacing.
  api = await startApi({ nodes: 5, persistence: 'aof-always', sandbox: true, maxTtlMs: 3_000, scenarioReadingMs: 0 });
  // nodeTimeoutMs 1 s: a stall of this test process on a busy two-core host is not a scenario's
  // doing, yet at the default 100 ms it read as refused extends, and at 400 ms (load 15) as one
  // node stalled. A scenario acting on the main masters still shows: the slow-network scenario's
  // 1,200 ms of latency is past 1 s, and crashes, pauses and flushes lose keys or change pids.
  app = new Redlock(api.cluster.urls, { retryCount: 2, retryDelayMs: 50, maxTtlMs: api.maxTtlMs, nodeTimeoutMs: 1_000 });
  direct = api.cluster.supervisor.directUrls().map((url) => {
    const c = new Redis(url, { maxRetriesPerRequest: 1 });
    c.on('error', () => undefined);
    return c;
  });
}, 120_000);
afterAll(async () => {
  await app?.quit();
  for (const c of direct ?? []) c.disconnect();
  await api?.stop();
});

const mainState = async () => ({
  nodes: api.cluster.supervisor.nodes().map((n) => `${n.id} ${n.state} pid ${n.pid} ${n.persistence} fault ${n.fault?.kind ?? 'pass'}`),
  runIds: await Promise.all(direct.map(runIdOf)),
});

async function runToEnd(id: ScenarioId): Promise<RunView> {
  const started = await api.call('POST', `/api/scenarios/${id}/runs`, { as: 'operator', body: { seed: 40, speed: 2 } });
  expect(started.status, await started.clone().text()).toBe(200);
  const deadline = Date.now() + 180_000;
  for (;;) {
    const run = ((await (await api.call('GET', '/api/scenarios/runs/current', { as: 'viewer' })).json()) as RunResponse).run!;
    if (['done', 'failed', 'cancelled'].includes(run.status)) return run;
    if (Date.now() > deadline) throw new Error(`scenario ${id} still ${run.status}`);
    if (run.status === 'predict') await api.call('POST', '/api/scenarios/runs/current/predict', { as: 'operator', body: { choice: null } });
    // poll: until the run ends
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('the teaching sandbox', () => {
  it(
    "every scenario that acts on nodes runs on the sandbox: locks held from code on the main masters are never lost, refused or changed, and the main masters' processes and keys stay as they were",
    { timeout: 900_000 },
    async () => {
      const list = (await (await api.call('GET', '/api/scenarios', { as: 'viewer' })).json()) as ScenarioList;
      expect(list.available).toBe(true);
      const sandboxPorts = api.sandbox!.supervisor.nodes().map((n) => String(n.proxyPort));
      const mainPorts = api.cluster.supervisor.nodes().map((n) => String(n.proxyPort));
      for (const port of sandboxPorts) expect(list.where).toContain(`:${port}`);
      for (const port of mainPorts) expect(list.where).toContain(`:${port}`);
      expect(list.where).toContain('never touched');

      const before = await mainState();
      const held: Lock[] = [];
      for (let i = 0; i < HELD; i++) held.push(await app.acquire(`app/inventory-sync-${i}`, 2_500));
      const tokens = held.map((l) => l.token);
      const fences = held.map((l) => l.fence);
      const problems: string[] = [];
      app.on('lock-lost', (e) => problems.push(`lost ${e.lock.resources[0]}: ${e.reason.message}`));
      app.on('node-error', (e) => problems.push(`node error: ${JSON.stringify(e)}`));
      app.on('quarantine', (e) => problems.push(`quarantine: ${JSON.stringify(e)}`));
      let extends_ = 0;
      let churn = 0;
      let stop = false;
      const keepAlive = (async () => {
        while (!stop) {
          await Promise.all(
            held.map((l, i) =>
              l.extend(2_500).then(
                (next) => {
                  held[i] = next;
                  extends_++;
                },
                (err: Error) => void problems.push(`extend ${l.resources[0]}: ${err.name} ${err.message}`),
              ),
            ),
          );
          // work: the app's holders extend every 300 ms
          await new Promise((r) => setTimeout(r, 300));
        }
      })();
      const newcomers = (async () => {
        while (!stop) {
          try {
            const lock = await app.acquire(`app/newcomer-${churn % 7}`, 1_000);
            await lock.release();
            churn++;
          } catch (err) {
            problems.push(`acquire newcomer: ${(err as Error).name} ${(err as Error).message}`);
          }
          // pace: newcomers spread over the scenario
          await new Promise((r) => setTimeout(r, 250));
        }
      })();

      const outcomes: string[] = [];
      const runs: RunView[] = [];
      try {
        for (const id of FAULTING) {
          const run = await runToEnd(id);
          outcomes.push(`${id} ${run.status} restore ${run.restore?.done} ${run.error ?? ''}`.trim());
          runs.push(run);
        }
      } finally {
        stop = true;
        await Promise.all([keepAlive, newcomers]);
      }
      expect(problems).toEqual([]);
      expect(outcomes).toEqual(FAULTING.map((id) => `${id} done restore true`));
      for (const run of runs) {
        // The first step said where the run ran: the sandbox's nodes, the main masters untouched.
        expect(run.where).toContain(`:${sandboxPorts[0]}`);
        expect(run.steps[0]!.say.startsWith(run.where!)).toBe(true);
        expect(run.nodes.map((n) => n.label.split(':')[1])).toEqual(api.sandbox!.supervisor.nodes().map((n) => String(n.port)));
      }
      expect(extends_).toBeGreaterThan(HELD * 20);
      expect(churn).toBeGreaterThan(20);
      // Unchanged: the same processes (no crash, restart, pause left, no fault), the same run_ids
      // (no restart at all), and every held lock on all five with its token.
      expect(await mainState()).toEqual(before);
      for (const [i, lock] of held.entries()) {
        expect(lock.fence).toBe(fences[i]);
        for (const node of direct) expect((await node.get(`rl:lock:${lock.resources[0]}`))?.split(' ')[0]).toBe(tokens[i]);
      }
      // No key of any run reached a main master.
      for (const node of direct) expect(await node.keys('rl:demo:*')).toEqual([]);
      await Promise.all(held.map((l) => l.release()));
    },
  );

  it(
    'a sandbox channel that leads to the main masters is refused before any node action, and the console says why',
    { timeout: 60_000 },
    async () => {
      // A console started with its sandbox channel pointed at the main masters' supervisor.
      const sandboxEnv = { url: process.env[SANDBOX_CONTROL_ENV.url], secretFile: process.env[SANDBOX_CONTROL_ENV.secretFile] };
      process.env[SANDBOX_CONTROL_ENV.url] = process.env.REDLOCK_CONTROL_URL;
      process.env[SANDBOX_CONTROL_ENV.secretFile] = process.env.REDLOCK_CONTROL_SECRET_FILE;
      await restartConsole();
      const before = await mainState();
      try {
        const res = await api.call('POST', '/api/scenarios/minority-failure/runs', { as: 'operator', body: { seed: 1, speed: 2 } });
        expect(res.status).toBe(409);
        const { error } = (await res.json()) as { error: { code: string; message: string } };
        expect(error.code).toBe('NOT_SANDBOX');
        expect(error.message).toMatch(
          /^refused: the teaching sandbox includes masters that hold applications' locks \(sandbox node 1 is at 127\.0\.0\.1:\d+/,
        );
        expect(await mainState()).toEqual(before);
      } finally {
        process.env[SANDBOX_CONTROL_ENV.url] = sandboxEnv.url;
        process.env[SANDBOX_CONTROL_ENV.secretFile] = sandboxEnv.secretFile;
        await restartConsole();
      }
    },
  );

  it('a run handed main masters behind other addresses refuses them by run_id, before its first command', { timeout: 60_000 }, async () => {
    const proxies = await Promise.all(
      api.cluster.supervisor.nodes().map(async (n) => {
        const proxy = new FaultProxy({
          name: `alias-${n.id}`,
          targetHost: n.host,
          targetPort: n.port,
          listenHost: '127.0.0.1',
          listenPort: 0,
        });
        await proxy.start();
        return proxy;
      }),
    );
    const acted: string[] = [];
    const real = api.cluster.supervisor.nodes();
    const alias = (n: NodeStatus, port: number): NodeStatus => {
      const url = new URL(n.directUrl);
      url.port = String(port);
      return { ...n, port, proxyPort: port, url: url.toString(), directUrl: url.toString() };
    };
    const control = {
      nodes: async () => real.map((n, i) => alias(n, proxies[i]!.port)),
      act: async (id: number, action: NodeAction) => {
        acted.push(`${id} ${action.action}`);
        return real[id - 1]!;
      },
    };
    const before = await mainState();
    try {
      const { getRuntime } = await import('@/lib/server/runtime');
      const run = new ScenarioRun({
        scenario: scenarioById('minority-failure')!,
        seed: 1,
        speed: 2,
        control,
        main: {
          urls: getRuntime().endpoints.map((e) => e.url),
          runIds: async () => (await Promise.all(direct.map(runIdOf))).filter((x) => x !== null),
        },
        basePrefix: 'rl:',
        startedBy: 'attacker',
      });
      await run.finished;
      const view = run.view();
      expect(view.status).toBe('failed');
      expect(view.error).toMatch(/sandbox node 1 is the same redis-server process as a main master/);
      expect(acted).toEqual([]);
      expect(view.steps.every((s) => s.status === 'pending')).toBe(true);
      for (const node of direct) expect(await node.keys(`${view.prefix}*`)).toEqual([]);
      expect(await mainState()).toEqual(before);
    } finally {
      await Promise.all(proxies.map((p) => p.close()));
    }
  });
});
