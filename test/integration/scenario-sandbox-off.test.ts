import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScenarioList } from '../../lib/api/scenarios';
import { startApi, type ApiHarness } from '../support/api';

/**
 * With external masters and no teaching sandbox, scenarios are off, and the console says
 * so plainly, with what to set. Before, the service refused with a sentence about "the console's own
 * sandbox cluster (npm start)" — the cluster that holds applications' locks.
 */
let api: ApiHarness;
beforeAll(async () => {
  api = await startApi({ nodes: 5 });
  // The masters as external ones (REDLOCK_NODES, no control channel), read at the first request.
  process.env.REDLOCK_MODE = 'external';
});
afterAll(async () => {
  await api?.stop();
});

describe('scenarios without a teaching sandbox', () => {
  it('are off: the list says why and what to set, and a run is refused with 409 before anything happens', async () => {
    const list = (await (await api.call('GET', '/api/scenarios', { as: 'operator' })).json()) as ScenarioList;
    expect(list.available).toBe(false);
    expect(list.where).toBeNull();
    expect(list.problem).toMatch(/^Scenarios are off: the masters are external \(REDLOCK_NODES\) and no teaching sandbox is configured\./);
    expect(list.problem).toContain('set REDLOCK_SANDBOX=local');
    const before = api.cluster.supervisor.nodes().map((n) => `${n.id} ${n.pid} ${n.state}`);
    const res = await api.call('POST', '/api/scenarios/minority-failure/runs', { as: 'operator', body: { seed: 1, speed: 2 } });
    expect(res.status).toBe(409);
    expect(((await res.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'NOT_SANDBOX',
      message: list.problem,
    });
    expect(api.cluster.supervisor.nodes().map((n) => `${n.id} ${n.pid} ${n.state}`)).toEqual(before);
  });
});
