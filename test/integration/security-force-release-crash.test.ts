import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockKey, tokenOf } from '@redlock-console/redlock';
import type { AuditResponse } from '../../lib/api/audit';
import type { LockHistoryResponse } from '../../lib/api/lock-history';
import type { LockGrant } from '../../lib/api/locks';
import { waitFor } from '../support/cluster';
import { CLIENT_AUTH, send, signIn, startConsoleCluster, type ConsoleCluster } from '../support/console-server';

/**
 * A crash during a force-release left no record. A holder on `crash-1`, node 5
 * slow, an operator force-releases, and the console is SIGKILLed 260 ms after the first delete:
 * the key was gone on a quorum, yet after the restart the audit log had no `lock.force-release`
 * entry and the lock history reported the hold as `expired`. Now the entry (intent, holder,
 * reason, who) is on a majority of the masters before the first delete: after the crash it is
 * there, marked incomplete, and the history says the hold was force-released.
 *
 * A real console process (scripts/console-server.ts with the built app), killed for real, with a
 * second console on the same masters running all along (two consoles, as docker-compose.yml runs
 * them): the entry is there, incomplete, on the one that survives, with no restart needed.
 */

let cc: ConsoleCluster;
beforeAll(async () => {
  cc = await startConsoleCluster({ nodes: 5, maxTtlMs: 10_000 });
}, 120_000);
afterAll(async () => {
  await cc?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a console killed during a force-release', () => {
  it('leaves an incomplete audit entry written before the first delete, seen by the other console, and the history says force-released', async () => {
    const [first, second] = await Promise.all([cc.start(), cc.start()]);
    const granted = await send(first.url, 'POST', '/api/locks', {
      headers: CLIENT_AUTH,
      body: { resource: 'crash-1', ttlMs: 2_500, metadata: { owner: 'billing-7' } },
    });
    expect(granted.status, granted.body).toBe(200);
    const grant = JSON.parse(granted.body) as LockGrant;
    const operator = await signIn(first.url, 'operator');
    // The grant's history entry is written (batches of 200 ms).
    const holdsOf = async () => {
      const res = await send(first.url, 'GET', '/api/locks/crash-1/history', { headers: operator.headers(first.url) });
      return res.status === 200 ? (JSON.parse(res.body) as LockHistoryResponse).holds.length : 0;
    };
    await waitFor(async () => (await holdsOf()) === 1, 10_000, "the grant's history entry");

    await cc.cluster.supervisor.act(5, { action: 'latency', latencyMs: 5_000, jitterMs: 0 });
    const nodes = [1, 2, 3, 4].map((id) => cc.cluster.client(id));
    await Promise.all(nodes.map((n) => n.connect()));
    const key = lockKey('rl:', 'crash-1');
    expect(tokenOf((await nodes[0]!.get(key))!)).toBe(grant.token);

    const release = send(first.url, 'POST', '/api/locks/crash-1/force-release', {
      headers: { ...operator.headers(first.url), 'content-type': 'application/json' },
      body: { token: grant.token, reason: 'incident 9: the worker is gone' },
    }).catch((err: unknown) => ({ status: 0, body: String(err) }));
    // The first delete on any fast node, then 260 ms, then SIGKILL: the request is still in flight
    // (after its deletes it reads every node's state, and node 5 answers in 5 s; asserted below).
    await waitFor(async () => (await Promise.all(nodes.map((n) => n.exists(key)))).includes(0), 10_000, 'the first delete');
    // pace: the request is still in flight when the console is killed
    await sleep(260);
    await first.kill('SIGKILL');
    expect((await release).status).toBe(0); // never answered
    await waitFor(
      async () => (await Promise.all(nodes.map((n) => n.exists(key)))).filter((e) => e === 0).length >= 3,
      5_000,
      'a quorum deleted',
    );
    await cc.cluster.supervisor.act(5, { action: 'heal' });

    // The console that stayed up reads the entry from the masters.
    const viewer = await signIn(second.url, 'viewer');
    const audit = await send(second.url, 'GET', '/api/audit?action=lock.force-release', { headers: viewer.headers(second.url) });
    expect(audit.status, audit.body).toBe(200);
    const entries = (JSON.parse(audit.body) as AuditResponse).entries.filter((e) => e.target === 'crash-1');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ actor: 'op', role: 'operator', outcome: 'incomplete', reason: 'incident 9: the worker is gone' });
    expect(entries[0]!.holder).toContain('client:test-client');
    expect(entries[0]!.holder).toContain('billing-7');

    // After the lease would have ended: force-released, not expired.
    // pace: past the lease's end (the clock must pass it)
    await sleep(Math.max(0, grant.expiresAt - Date.now() + 200));
    const history = await send(second.url, 'GET', '/api/locks/crash-1/history', { headers: viewer.headers(second.url) });
    expect(history.status, history.body).toBe(200);
    const holds = (JSON.parse(history.body) as LockHistoryResponse).holds;
    expect(holds).toHaveLength(1);
    expect(holds[0]).toMatchObject({ principal: 'client:test-client', ended: 'force-released' });
  }, 90_000);
});
