import { afterAll, beforeAll } from 'vitest';
import type { RunView } from '@/lib/api/scenarios';
import { scenarioById, ScenarioRun, type ClusterControl } from '@/lib/scenarios';
import { ScenarioCluster } from '@/lib/scenarios/cluster';
import { startTestCluster, uniquePrefix, type TestCluster } from './cluster';

/**
 * Five real redis-servers (AOF always) behind their fault proxies, driven through the supervisor
 * as the scenarios drive theirs, and the scenario engine's view of them (`ScenarioCluster`, readable
 * before the first test), for the whole test file: registers its own beforeAll / afterAll; read
 * `control` and `scenario` inside tests. `runToEnd` runs a whole scenario on them.
 */
export interface ScenarioNodes {
  readonly control: ClusterControl;
  readonly scenario: ScenarioCluster;
  /**
   * Run scenario `id` to its end at 2×, skipping every prediction (the outcome never depends on
   * it); with `cancelAfter`, cancelled once that step is done.
   */
  runToEnd(id: string, seed: number, cancelAfter?: string): Promise<RunView>;
}

export function scenarioNodes(): ScenarioNodes {
  let cluster: TestCluster | undefined;
  let control: ClusterControl | undefined;
  let scenario: ScenarioCluster | undefined;
  beforeAll(async () => {
    cluster = await startTestCluster({ nodes: 5, persistence: 'aof-always' });
    const supervisor = cluster.supervisor;
    control = { nodes: async () => supervisor.nodes(), act: (id, action) => supervisor.act(id, action) };
    scenario = await ScenarioCluster.open(control);
    await scenario.whenReadable(5_000);
  });
  afterAll(async () => {
    scenario?.close();
    await cluster?.stop();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('scenarioNodes: the nodes are started in beforeAll; read them inside a test');
    return value;
  };
  return {
    get control() {
      return started(control);
    },
    get scenario() {
      return started(scenario);
    },
    runToEnd: (id, seed, cancelAfter) => runToEnd(started(control), id, seed, cancelAfter),
  };
}

async function runToEnd(control: ClusterControl, id: string, seed: number, cancelAfter?: string): Promise<RunView> {
  const run = new ScenarioRun({
    scenario: scenarioById(id)!,
    seed,
    speed: 2,
    control,
    basePrefix: uniquePrefix('scn-run'),
    startedBy: 'test',
  });
  const answer = setInterval(() => {
    const view = run.view();
    if (cancelAfter && view.steps.find((s) => s.id === cancelAfter)?.status === 'done') run.cancel();
    else if (view.pendingPrediction) run.predict(null);
  }, 50);
  try {
    await run.finished;
  } finally {
    clearInterval(answer);
  }
  return run.view();
}
