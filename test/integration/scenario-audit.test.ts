import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AuditResponse } from '../../lib/api/audit';
import type { RunResponse } from '../../lib/api/scenarios';
import { USERS, startApi, type ApiHarness } from '../support/api';

/**
 * The node actions a teaching scenario takes (crash, restart, partition…) were
 * not audited, so the log said nothing of nodes a scenario crashed. They are now, as the user who
 * ran it, marked with the scenario and the run.
 */

let api: ApiHarness;
beforeAll(async () => {
  // Durable nodes: a node restarted without persistence would come back without the audit log.
  api = await startApi({ nodes: 5, persistence: 'aof-always', sandbox: true });
});
afterAll(async () => {
  await api?.stop();
});

async function current(): Promise<NonNullable<RunResponse['run']>> {
  return ((await (await api.call('GET', '/api/scenarios/runs/current', { as: 'viewer' })).json()) as RunResponse).run!;
}

describe('node actions a scenario takes', () => {
  it('are audited as the user who ran it, done by that scenario and run', { timeout: 120_000 }, async () => {
    const started = await api.call('POST', '/api/scenarios/minority-failure/runs', { as: 'operator', body: { seed: 7, speed: 2 } });
    expect(started.status, await started.clone().text()).toBe(200);
    const { runId } = ((await started.json()) as RunResponse).run!;

    // Skip the predictions until the two nodes have crashed, then cancel: the run puts them back.
    const deadline = Date.now() + 90_000;
    let cancelled = false;
    for (;;) {
      const run = await current();
      if (run.status === 'done' || run.status === 'cancelled' || run.status === 'failed') break;
      if (Date.now() > deadline) throw new Error(`run still ${run.status}`);
      if (run.status === 'predict')
        await api.call('POST', '/api/scenarios/runs/current/predict', { as: 'operator', body: { choice: null } });
      if (!cancelled && run.steps.find((s) => s.id === 'crash-two')?.status === 'done') {
        await api.call('POST', '/api/scenarios/runs/current/cancel', { as: 'operator', body: {} });
        cancelled = true;
      }
      // poll: until the run ends
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(cancelled).toBe(true);
    // The entries are written without holding the run back: wait for the last ones (two crashes, two starts).
    const audit = async () =>
      ((await (await api.call('GET', '/api/audit?action=node&limit=200', { as: 'viewer' })).json()) as AuditResponse).entries;
    let entries = await audit();
    await vi.waitFor(
      async () => {
        entries = await audit();
        const actions = entries.filter((e) => e.via?.runId === runId).map((e) => e.action);
        expect(actions.filter((a) => a === 'node.crash' || a === 'node.start')).toHaveLength(4);
      },
      { timeout: 10_000, interval: 100 },
    );
    const ofRun = entries.filter((e) => e.via?.runId === runId);
    const crashes = ofRun.filter((e) => e.action === 'node.crash');
    expect(crashes).toHaveLength(2);
    for (const e of crashes) {
      expect(e).toMatchObject({
        actor: USERS.operator.username,
        role: 'operator',
        outcome: 'ok',
        via: { scenario: 2, scenarioId: 'minority-failure', runId },
      });
      expect(e.target).toMatch(/^sandbox node [1-5]$/);
      expect(e.before).toMatchObject({ state: 'up' });
      expect(e.after).toMatchObject({ state: 'down' });
    }
    // Putting the cluster back is the scenario's doing too: the crashed nodes are started again.
    const starts = ofRun.filter((e) => e.action === 'node.start').map((e) => e.target);
    expect(starts.sort()).toEqual(crashes.map((e) => e.target).sort());
    // An operator's own action carries no scenario.
    expect(entries.filter((e) => e.via === undefined && e.action === 'node.crash')).toEqual([]);
  });
});
