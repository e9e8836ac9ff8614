import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiErrorSchema } from '../../lib/api/common';
import { nodesResponseSchema } from '../../lib/api/nodes';
import { scenarioListSchema } from '../../lib/api/scenarios';
import { startScenarioSandbox, type ScenarioSandbox } from '../../lib/cluster';
import { waitFor } from '../support/cluster';
import {
  send,
  signIn,
  startConsoleCluster,
  type ConsoleCluster,
  type ConsoleProcess,
  type ProcessSession,
} from '../support/console-server';

/**
 * Two consoles on one set of masters and one teaching sandbox, as two real processes. What only one
 * of them may do at a time is decided by a lease on the masters (lib/server/console-lease.ts):
 * one scenario run across both consoles, and one console drives the supervisor's node actions;
 * the other answers 409 naming the console that holds it.
 */

let cc: ConsoleCluster;
let sandbox: ScenarioSandbox;
let sandboxDir: string;
let a: ConsoleProcess;
let b: ConsoleProcess;
let opA: ProcessSession;
let opB: ProcessSession;
beforeAll(async () => {
  cc = await startConsoleCluster({ nodes: 3, maxTtlMs: 3_000 });
  sandboxDir = mkdtempSync(join(tmpdir(), 'redlock-replicas-sandbox-'));
  sandbox = await startScenarioSandbox({ dataDir: sandboxDir, keyPrefix: 'rl:', maxTtlMs: 3_000 });
  // A long reading pause: a run stays on its first steps for the whole test.
  const env = { ...sandbox.env, REDLOCK_SCENARIO_READING_MS: '60000', REDLOCK_NODE_TIMEOUT_MS: '1000' };
  a = await cc.start({ ...env, REDLOCK_INSTANCE: 'console-a' });
  b = await cc.start({ ...env, REDLOCK_INSTANCE: 'console-b' });
  opA = await signIn(a.url, 'operator');
  opB = await signIn(b.url, 'operator');
}, 180_000);
afterAll(async () => {
  await cc?.stop();
  await sandbox?.close();
  if (sandboxDir) rmSync(sandboxDir, { recursive: true, force: true });
});

const post = (c: ConsoleProcess, s: ProcessSession, path: string, body: unknown) =>
  send(c.url, 'POST', path, { headers: { ...s.headers(c.url), 'content-type': 'application/json' }, body });

describe('what one console at a time may do', () => {
  it('node actions: the console that acted first drives the supervisor, the other says which one does', async () => {
    const first = await post(a, opA, '/api/nodes/1/actions', { action: 'heal' });
    expect(first.status, first.body).toBe(200);
    const other = await post(b, opB, '/api/nodes/1/actions', { action: 'heal' });
    expect(other.status, other.body).toBe(409);
    const error = apiErrorSchema.parse(JSON.parse(other.body)).error;
    expect(error.code).toBe('NOT_SANDBOX');
    expect(error.message).toContain('console console-a');
    // The owner keeps it: its next action is not refused.
    expect((await post(a, opA, '/api/nodes/2/actions', { action: 'heal' })).status).toBe(200);
    // Each console's Nodes screen is told who drives the actions, so the other offers none.
    const drivenBy = async (c: ConsoleProcess, s: ProcessSession) => {
      const res = await send(c.url, 'GET', '/api/nodes', { headers: s.headers(c.url) });
      expect(res.status, res.body).toBe(200);
      return nodesResponseSchema.parse(JSON.parse(res.body)).actionsBy;
    };
    expect(await drivenBy(a, opA)).toMatchObject({ instance: 'console-a', self: true });
    expect(await drivenBy(b, opB)).toMatchObject({ instance: 'console-a', self: false });
  });

  it('one scenario run at a time across the consoles: the other refuses with 409 naming where it runs, until it ends', async () => {
    const started = await post(a, opA, '/api/scenarios/quorum/runs', { seed: 7 });
    expect(started.status, started.body).toBe(200);
    const refused = await post(b, opB, '/api/scenarios/quorum/runs', { seed: 8 });
    expect(refused.status, refused.body).toBe(409);
    const error = apiErrorSchema.parse(JSON.parse(refused.body)).error;
    expect(error.message).toContain('console console-a');
    expect(error.message).toContain('only one run at a time');
    // B's catalog says so before anyone clicks: the screen's unavailable state (start buttons off, the reason shown).
    const list = await send(b.url, 'GET', '/api/scenarios', { headers: opB.headers(b.url) });
    expect(list.status, list.body).toBe(200);
    const catalog = scenarioListSchema.parse(JSON.parse(list.body));
    expect(catalog.available).toBe(false);
    expect(catalog.problem).toContain('console console-a');
    // Cancelled on A: the lease is given back when its run has ended, and B may start one.
    expect((await post(a, opA, '/api/scenarios/runs/current/cancel', {})).status).toBe(200);
    let next = refused;
    await waitFor(
      async () => {
        next = await post(b, opB, '/api/scenarios/quorum/runs', { seed: 8 });
        return next.status !== 409;
      },
      20_000,
      "B's run once A's has ended",
    );
    expect(next.status, next.body).toBe(200);
    const onA = await post(a, opA, '/api/scenarios/quorum/runs', { seed: 9 });
    expect(onA.status, onA.body).toBe(409);
    expect(apiErrorSchema.parse(JSON.parse(onA.body)).error.message).toContain('console console-b');
    expect((await post(b, opB, '/api/scenarios/runs/current/cancel', {})).status).toBe(200);
  });
});
