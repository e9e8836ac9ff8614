import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditResponse } from '../../lib/api/audit';
import { markCleanResponseSchema, nodesResponseSchema, type NodeView } from '../../lib/api/nodes';
import { startApi, type ApiHarness } from '../support/api';
import { waitFor } from '../support/cluster';

// The node screens' API: why a node is quarantined, the
// votes the core refuses, the supervisor's continuity in the audit log, and mark-clean as a
// compare-and-set on the sentinel the operator saw.

let api: ApiHarness;
beforeAll(async () => {
  api = await startApi({ nodes: 5, maxTtlMs: 30_000 });
});
afterAll(async () => {
  await api?.stop();
});

async function nodes(): Promise<NodeView[]> {
  const res = await api.call('GET', '/api/nodes', { as: 'viewer' });
  expect(res.status).toBe(200);
  return nodesResponseSchema.parse(await res.json()).nodes;
}

async function nodeView(id: number): Promise<NodeView> {
  return (await nodes())[id - 1]!;
}

async function act(id: number, body: unknown): Promise<void> {
  const res = await api.call('POST', `/api/nodes/${id}/actions`, { as: 'operator', body });
  expect(res.status, await res.clone().text()).toBe(200);
}

/** Take locks through the console's lock service until `done` (its client reconnects to a restarted node on its own schedule). */
async function acquireUntil(done: (view: NodeView) => boolean, id: number, what: string): Promise<void> {
  let i = 0;
  await waitFor(
    async () => {
      await api.call('POST', '/api/locks', {
        as: 'client',
        body: { resource: `api-nodes-${what.replace(/\W+/g, '-')}-${i++}`, ttlMs: 1_000 },
      });
      return done(await nodeView(id));
    },
    10_000,
    what,
  );
}

async function audit(action: string): Promise<AuditResponse['entries']> {
  return ((await (await api.call('GET', `/api/audit?action=${action}&limit=50`, { as: 'viewer' })).json()) as AuditResponse).entries;
}

/** Mark clean what the console shows now, as the dialog does. */
function markClean(id: number, view: NodeView, reason = 'test: judged from the screen') {
  const q = view.quarantine;
  return api.call('POST', `/api/nodes/${id}/mark-clean`, {
    as: 'operator',
    body: { reason, seen: q && q.state !== 'unknown' ? { runId: q.runId, createdAt: q.createdAt } : { runId: null } },
  });
}

describe('nodes API: restarts, continuity and mark-clean', () => {
  it('a graceful restart is adopted and audited; a crash + start is not, and the node shows why it is quarantined', async () => {
    // Node 2 with an AOF (it ran without persistence: it comes back empty and is marked clean from the screen).
    await act(2, { action: 'restart', persistence: 'aof-always' });
    await waitFor(async () => (await nodeView(2)).up, 5_000, 'node 2 up');
    expect((await markClean(2, await nodeView(2))).status).toBe(200);
    const clean = await nodeView(2);
    expect(clean.quarantine).toMatchObject({ state: 'clean', runId: clean.runId, restartPending: false });

    await act(2, { action: 'restart' });
    const [adopted] = await audit('node.continuity');
    expect(adopted).toMatchObject({
      target: 'node 2',
      outcome: 'adopted',
      actor: 'op',
      detail: expect.stringMatching(/^adopted: stopped gracefully with aof-always/),
    });
    await waitFor(async () => (await nodeView(2)).up, 5_000, 'node 2 up');
    const after = await nodeView(2);
    expect(after.usable).toBe(true);
    expect(after.quarantine).toMatchObject({ state: 'clean', runId: after.runId, prevRunId: clean.runId });

    await act(2, { action: 'crash' });
    await act(2, { action: 'start' });
    const [notAdopted] = await audit('node.continuity');
    expect(notAdopted).toMatchObject({ target: 'node 2', outcome: 'not-adopted', detail: expect.stringMatching(/last exit: SIGKILL/) });
    await waitFor(async () => (await nodeView(2)).up, 5_000, 'node 2 up');
    // Before any client has checked it, the console already counts the restart as the next check will.
    const pending = await nodeView(2);
    expect(pending.usable).toBe(false);
    expect(pending.quarantine).toMatchObject({ state: 'quarantined', cause: 'restart', restartPending: true, runId: after.runId });
    expect(pending.quarantine!.message).toContain(`process ${after.runId!.slice(0, 8)} → ${pending.runId!.slice(0, 8)}`);
    expect(pending.quarantine!.remainingMs).toBeGreaterThan(25_000);

    // A client's acquire records it: the sentinel now names both processes and the cause.
    await acquireUntil((v) => v.quarantine?.restartPending === false, 2, 'the restart recorded');
    const recorded = await nodeView(2);
    expect(recorded.quarantine).toMatchObject({ state: 'quarantined', cause: 'restart', runId: pending.runId, prevRunId: after.runId });
    const response = (await (await api.call('GET', '/api/nodes', { as: 'viewer' })).json()) as { verdict: { reasons: string[] } };
    expect(response.verdict.reasons.some((r) => /^node 2 is quarantined for another [\d.]+ s \(restart detected\)$/.test(r))).toBe(true);
  });

  it('mark-clean is a compare-and-set: a sentinel that changed since it was looked at is refused with 409 and audited', async () => {
    const seen = await nodeView(2);
    expect(seen.quarantine?.state).toBe('quarantined');
    expect(seen.quarantine!.markCleanWarning).toMatch(/less than the lease ceiling \(30 s\)/);
    // The node restarts again between the operator's look and the click.
    await act(2, { action: 'crash' });
    await act(2, { action: 'start' });
    await acquireUntil(
      (v) => v.quarantine?.restartPending === false && v.quarantine.runId !== seen.quarantine!.runId,
      2,
      'the second restart recorded',
    );
    const stale = await markClean(2, seen);
    expect(stale.status).toBe(409);
    const body = (await stale.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('SENTINEL_CHANGED');
    expect(body.error.message).toMatch(/^node 2\b.*changed since it was looked at.*look again/);
    expect((await nodeView(2)).quarantine?.state).toBe('quarantined'); // untouched
    expect((await audit('node.mark-clean'))[0]).toMatchObject({ outcome: 'refused', target: 'node 2' });

    // Judged again on what is there now: applied, with the warning of a restart within maxTtl.
    const fresh = await nodeView(2);
    const ok = await markClean(2, fresh);
    expect(ok.status).toBe(200);
    const answer = markCleanResponseSchema.parse(await ok.json());
    expect(answer.warning).toMatch(
      /^node 2: (its redis-server process started|a restart was found) \d+ s ago, less than the lease ceiling \(30 s\)/,
    );
    expect(answer.runId).toBe(fresh.runId);
    expect(await nodeView(2)).toMatchObject({ usable: true, quarantine: { state: 'clean' } });
  });

  it('an evicting maxmemory-policy makes the node unusable, as the lock core refuses its votes', async () => {
    const client = api.cluster.client(5);
    await client.connect();
    await client.config('SET', 'maxmemory-policy', 'volatile-lru');
    try {
      const view = await nodeView(5);
      expect(view).toMatchObject({ usable: false, refusal: { reason: 'unsafe-eviction' } });
      expect(view.verdict.level).toBe('unsafe');
      const res = (await (await api.call('GET', '/api/nodes', { as: 'viewer' })).json()) as { verdict: { reasons: string[] } };
      expect(res.verdict.reasons).toContainEqual(
        expect.stringMatching(/^node 5 votes against \(unsafe-eviction\): maxmemory-policy volatile-lru/),
      );
    } finally {
      await client.config('SET', 'maxmemory-policy', 'noeviction');
    }
    expect((await nodeView(5)).refusal).toBeNull();
  });

  it('a malformed seen sentinel is a 400 with a message', async () => {
    for (const seen of [{ runId: 'not-hex!' }, { runId: null, createdAt: -1 }, { runId: null, extra: 1 }, 'abc']) {
      const res = await api.call('POST', '/api/nodes/1/mark-clean', { as: 'operator', body: { reason: 'bad input', seen } });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/seen/);
    }
  });
});
