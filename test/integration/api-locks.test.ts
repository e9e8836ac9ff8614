import { spawnSync } from 'node:child_process';
import { withoutReplica } from '../support/metrics-text';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditResponse } from '../../lib/api/audit';
import type { ForceReleaseResponse, LockDetailResponse, LockGrant, LockListResponse } from '../../lib/api/locks';
import { Redlock, tokenOf } from '@redlock-console/redlock';
import { auditFromCsv } from '../support/audit-csv';
import { METRICS_TOKEN, startApi, type ApiHarness } from '../support/api';
import { findPromtool } from '../support/promtool';

let api: ApiHarness;
beforeAll(async () => {
  api = await startApi({ nodes: 5, maxTtlMs: 30_000 });
});
afterAll(async () => {
  await api?.stop();
});

async function grant(resource: string, ttlMs = 10_000): Promise<LockGrant> {
  const res = await api.call('POST', '/api/locks', { as: 'client', body: { resource, ttlMs, metadata: { purpose: 'test' } } });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as LockGrant;
}

/** The token each node's lock key holds (its value is `<token> <metadata JSON>`), or null. */
async function directTokens(resource: string): Promise<Array<string | null>> {
  return Promise.all(
    [1, 2, 3, 4, 5].map(async (id) => {
      const c = api.cluster.client(id);
      if (c.status === 'wait') await c.connect();
      const value = await c.get(`rl:lock:${resource}`);
      return value === null ? null : tokenOf(value);
    }),
  );
}

describe('lock service over HTTP', () => {
  it('grants with a fence and votes, refuses a second holder with 409, and answers 503 without a quorum', async () => {
    const first = await grant('svc-a');
    expect(first.resources).toEqual(['svc-a']);
    expect(first.fence).toBeGreaterThan(0);
    expect(first.validityMs).toBeGreaterThan(9_000);
    expect(first.votes).toHaveLength(5); // decided at quorum: the rest may still be pending
    expect(first.votes.filter((v) => v.vote === 'for').length).toBeGreaterThanOrEqual(3);
    const second = await api.call('POST', '/api/locks', { as: 'client', body: { resource: 'svc-a', ttlMs: 1_000 } });
    expect(second.status).toBe(409);
    const body = (await second.json()) as {
      error: { code: string; message: string; details: { votes: Array<{ reason: string }>; holder: Record<string, string> } };
    };
    expect(body.error.code).toBe('LOCK_CONTENDED');
    expect(body.error.details.votes.some((v) => v.reason === 'contended')).toBe(true);
    // An API key may take locks but not read them: the 409 does not say who holds it.
    expect(body.error.details.holder).toBeNull();
    expect(body.error.message).toMatch(/held by another client \(/);
    expect(JSON.stringify(body)).not.toContain(first.token);
    // A console session (which may read every lock anyway) is told who holds it: the holder's
    // metadata, written by the first grant; never its token.
    const seen = await api.call('POST', '/api/locks', { as: 'operator', body: { resource: 'svc-a', ttlMs: 1_000 } });
    expect(seen.status).toBe(409);
    const seenBody = (await seen.json()) as { error: { message: string; details: { holder: Record<string, string> } } };
    expect(seenBody.error.details.holder).toMatchObject({ via: 'http', purpose: 'test', owner: expect.any(String) as string });
    expect(seenBody.error.message).toContain(`held by another client "${seenBody.error.details.holder.owner}"`);
    expect(JSON.stringify(seenBody)).not.toContain(first.token);

    for (const id of [1, 2, 3]) await api.cluster.supervisor.partition(id);
    try {
      const none = await api.call('POST', '/api/locks', { as: 'client', body: { resource: 'svc-b', ttlMs: 2_000 } });
      expect(none.status).toBe(503);
      // With a wait, an outage is still an outage (it read 409 "still held by another
      // client after waiting", without votes, and was missing from the metrics).
      const counted = async () => {
        const text = withoutReplica(
          await (await api.call('GET', '/api/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text(),
        );
        return Number(/redlock_operations_total\{operation="acquire",outcome="QuorumUnavailableError"\} (\d+)/.exec(text)?.[1] ?? 0);
      };
      const before = await counted();
      const waited = await api.call('POST', '/api/locks', { as: 'client', body: { resource: 'svc-b', ttlMs: 2_000, waitMs: 2_500 } });
      const waitedBody = (await waited.json()) as { error: { code: string; details: { votes: unknown[] } } };
      expect(waited.status, JSON.stringify(waitedBody)).toBe(503);
      expect(waitedBody.error.code).toBe('QUORUM_UNAVAILABLE');
      expect(waitedBody.error.details.votes).toHaveLength(5);
      expect(await counted()).toBe(before + 1);
    } finally {
      for (const id of [1, 2, 3]) await api.cluster.supervisor.heal(id);
    }
  });

  it('extends and releases by token; a wrong token releases nothing', async () => {
    const lock = await grant('svc-c', 3_000);
    const extended = await api.call('POST', '/api/locks/svc-c/extend', { as: 'client', body: { token: lock.token, ttlMs: 20_000 } });
    expect(extended.status).toBe(200);
    expect(((await extended.json()) as { validityMs: number }).validityMs).toBeGreaterThan(15_000);
    const wrong = await api.call('POST', '/api/locks/svc-c/release', { as: 'client', body: { token: 'someone-else' } });
    expect(((await wrong.json()) as { released: boolean }).released).toBe(false);
    expect((await directTokens('svc-c')).every((t) => t === lock.token)).toBe(true);
    const released = await api.call('POST', '/api/locks/svc-c/release', { as: 'client', body: { token: lock.token } });
    expect((await released.json()) as { released: boolean; deleted: number }).toMatchObject({ released: true, deleted: 5 });
    expect((await directTokens('svc-c')).every((t) => t === null)).toBe(true);
  });

  it('lists locks with their quorum view and reads one lock with its metadata', async () => {
    const lock = await grant('svc-list-1');
    const list = (await (await api.call('GET', '/api/locks?prefix=svc-list&fresh=1', { as: 'viewer' })).json()) as LockListResponse;
    expect(list.items.map((i) => i.resource)).toEqual(['svc-list-1']);
    expect(list.items[0]).toMatchObject({ state: 'held', majorityToken: lock.token, holders: 5 });
    const detail = (await (await api.call('GET', '/api/locks/svc-list-1', { as: 'viewer' })).json()) as LockDetailResponse;
    expect(detail.view?.meta).toMatchObject({ owner: 'test-client', purpose: 'test', fence: String(lock.fence) });
    const encoded = await grant('svc/with space%');
    const odd = (await (
      await api.call('GET', `/api/locks/${encodeURIComponent('svc/with space%')}`, { as: 'viewer' })
    ).json()) as LockDetailResponse;
    expect(odd.view?.majorityToken).toBe(encoded.token);

    // The list comes from the live lock index once it is built: a new grant is in the next reading
    // without a rescan, and the metrics say where each reading came from and why nodes were scanned.
    const again = await grant('svc-list-2');
    const indexed = (await (await api.call('GET', '/api/locks?prefix=svc-list&fresh=1', { as: 'viewer' })).json()) as LockListResponse;
    expect(indexed.index).toBe(true);
    expect(indexed.items.map((i) => [i.resource, i.majorityToken])).toEqual([
      ['svc-list-1', lock.token],
      ['svc-list-2', again.token],
    ]);
    const scrape = withoutReplica(
      await (await api.call('GET', '/api/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text(),
    );
    expect(scrape).toMatch(/redlock_lock_list_read_seconds_count\{source="index"\} [1-9]/);
    expect(scrape).toMatch(/redlock_lock_index_rescans_total\{node="1",reason="first-build"\} 1\b/);
    expect(scrape).toMatch(/redlock_lock_index_reread_keys_total\{node="1"\} [1-9]/);
    // The exposition format's naming rules (what promtool check metrics lints): counters end in
    // _total, nothing else does.
    const types = [...scrape.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => ({ name: m[1]!, type: m[2]! }));
    expect(types.length).toBeGreaterThan(20);
    expect(types.filter((t) => t.type !== 'counter' && t.name.endsWith('_total')).map((t) => t.name)).toEqual([]);
    expect(types.filter((t) => t.type === 'counter' && !t.name.endsWith('_total')).map((t) => t.name)).toEqual([]);
    // Prometheus's own linter on the real output, and every metric the alert rules use is exported.
    const lint = spawnSync(findPromtool(), ['check', 'metrics'], { input: scrape, encoding: 'utf8' });
    expect(lint.status, lint.stdout + lint.stderr).toBe(0);
    const rules = readFileSync(join(import.meta.dirname, '..', '..', 'deploy', 'prometheus', 'alerts.yml'), 'utf8');
    const used = new Set([...rules.matchAll(/\b(redlock_[a-z_]+)\b/g)].map((m) => m[1]!));
    expect(used.size).toBeGreaterThan(5);
    const exported = new Set(types.map((t) => t.name));
    expect([...used].filter((name) => !exported.has(name))).toEqual([]);
  });

  it('a progressive first page answers while a paused node holds the scan up, then the full page follows', async () => {
    const lock = await grant('svc-prog-1');
    const get = async (query: string) =>
      (await (await api.call('GET', `/api/locks?${query}`, { as: 'viewer' })).json()) as LockListResponse;
    expect(await get('prefix=svc-prog&progressive=1&fresh=1')).toMatchObject({ complete: true, scannedKeys: expect.any(Number) as number });
    await api.cluster.supervisor.pause(5);
    try {
      const t0 = performance.now();
      const early = await get('prefix=svc-prog&progressive=1&fresh=1');
      expect(performance.now() - t0).toBeLessThan(1_500);
      expect(early).toMatchObject({ complete: false, nextCursor: null, total: expect.any(Number) as number });
      expect(early.items.map((i) => i.resource)).toEqual(['svc-prog-1']);
      expect(early.items[0]).toMatchObject({ state: 'held', majorityToken: lock.token, holders: 4, unknownNodes: [5] });
      expect(early.nodes[4]).toMatchObject({ node: 5, ok: false });
      // Without progressive=1 a first page waits for the scan, which gives up on node 5.
      const full = await get('prefix=svc-prog');
      expect(full).toMatchObject({ complete: true, matched: 1 });
      expect(full.nodes[4]).toMatchObject({ node: 5, ok: false });
      expect((await get('prefix=svc-prog&progressive=1')).complete).toBe(true);
    } finally {
      await api.cluster.supervisor.resume(5);
    }
  });
});

describe('force-release', () => {
  it('dry run shows per node what would happen and changes nothing', async () => {
    const lock = await grant('fr-dry');
    const res = await api.call('POST', '/api/locks/fr-dry/force-release', {
      as: 'operator',
      body: { token: lock.token, reason: 'preview', dryRun: true },
    });
    const body = (await res.json()) as ForceReleaseResponse;
    expect(body.nodes.map((n) => n.outcome)).toEqual(Array(5).fill('would-delete'));
    expect((await directTokens('fr-dry')).every((t) => t === lock.token)).toBe(true);
  });

  it('race: released and re-taken between the look and the click, the new holder keeps its keys on every node', async () => {
    const old = await grant('fr-race');
    // The operator looks and sees `old.token` …
    const seen = (await (await api.call('GET', '/api/locks/fr-race', { as: 'operator' })).json()) as LockDetailResponse;
    expect(seen.view?.majorityToken).toBe(old.token);
    // … meanwhile the holder releases and another client takes the lock …
    await api.call('POST', '/api/locks/fr-race/release', { as: 'client', body: { token: old.token } });
    const other = new Redlock(api.cluster.urls, { retryCount: 0, maxTtlMs: api.maxTtlMs });
    const newer = await other.acquire('fr-race', 10_000);
    try {
      // … then the operator clicks.
      const res = await api.call('POST', '/api/locks/fr-race/force-release', {
        as: 'operator',
        body: { token: seen.view!.majorityToken!, reason: 'stuck lock' },
      });
      const body = (await res.json()) as ForceReleaseResponse;
      expect(body.deleted).toBe(0);
      expect(body.nodes.map((n) => n.outcome)).toEqual(Array(5).fill('other-holder'));
      expect(await directTokens('fr-race')).toEqual(Array(5).fill(newer.token));
    } finally {
      await newer.release();
      await other.quit();
    }
  });

  it('deletes the seen token everywhere, and the audit log has the entry with before/after per node', async () => {
    const lock = await grant('fr-real');
    const res = await api.call('POST', '/api/locks/fr-real/force-release', {
      as: 'operator',
      body: { token: lock.token, reason: 'incident 42' },
    });
    const body = (await res.json()) as ForceReleaseResponse;
    expect(body.deleted).toBe(5);
    expect(body.nodes.every((n) => n.outcome === 'deleted' && n.before?.token === lock.token && n.after?.token === null)).toBe(true);
    expect((await directTokens('fr-real')).every((t) => t === null)).toBe(true);

    const audit = (await (await api.call('GET', '/api/audit?action=lock.force-release', { as: 'viewer' })).json()) as AuditResponse;
    const entry = audit.entries.find((e) => e.id === body.auditId)!;
    expect(entry).toMatchObject({
      actor: 'op',
      role: 'operator',
      action: 'lock.force-release',
      target: 'fr-real',
      reason: 'incident 42',
      outcome: 'ok',
    });
    expect(entry.before).toHaveLength(5);
    expect(entry.after).toHaveLength(5);
    expect(audit.nodesRead).toBe(5);
  });
});

describe('audit log', () => {
  it('one entry per mutation, readable after losing a minority of nodes, CSV round-trips', async () => {
    await api.call('POST', '/api/nodes/2/actions', { as: 'operator', body: { action: 'latency', latencyMs: 10, jitterMs: 0 } });
    await api.call('POST', '/api/nodes/2/actions', { as: 'operator', body: { action: 'heal' } });
    const json = (await (await api.call('GET', '/api/audit?action=node', { as: 'viewer' })).json()) as AuditResponse;
    const latency = json.entries.filter((e) => e.action === 'node.latency');
    expect(latency).toHaveLength(1);
    expect(latency[0]).toMatchObject({ actor: 'op', role: 'operator', target: 'node 2', outcome: 'ok' });
    expect((latency[0]!.after as { fault: { kind: string } }).fault.kind).toBe('latency');

    await api.cluster.supervisor.partition(4);
    await api.cluster.supervisor.partition(5);
    try {
      const partial = (await (await api.call('GET', '/api/audit?limit=1000', { as: 'viewer' })).json()) as AuditResponse;
      expect(partial.nodesFailed).toBe(2);
      expect(partial.entries.map((e) => e.id)).toEqual(expect.arrayContaining(latency.map((e) => e.id)));
      const ids = partial.entries.map((e) => e.id);
      expect(new Set(ids).size).toBe(ids.length); // merged across nodes without duplicates
    } finally {
      await api.cluster.supervisor.heal(4);
      await api.cluster.supervisor.heal(5);
    }

    const csv = await (await api.call('GET', '/api/audit?format=csv&limit=1000', { as: 'viewer' })).text();
    const all = (await (await api.call('GET', '/api/audit?limit=1000', { as: 'viewer' })).json()) as AuditResponse;
    expect(auditFromCsv(csv)).toEqual(all.entries);
  });

  it('failed logins are audited', async () => {
    await api.call('POST', '/api/auth/login', { body: { username: 'mallory', password: '=cmd|calc' } });
    const json = (await (await api.call('GET', '/api/audit?action=login.failed', { as: 'viewer' })).json()) as AuditResponse;
    // The typed username is the target, never the actor: the actor of an anonymous attempt is `anonymous`.
    expect(json.entries.some((e) => e.actor === 'anonymous' && e.target === 'mallory' && e.outcome === 'denied' && e.count === 1)).toBe(
      true,
    );
  });
});

describe('live events', () => {
  it('a grant made by another client reaches an SSE listener within 500 ms; its extension and release follow, never as a second grant', async () => {
    const res = await api.call('GET', '/api/events', { as: 'viewer' });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    // The stream says connected once the hub is subscribed on every node.
    while (!/: connected \d+/.test(buffer)) {
      const chunk = await Promise.race([
        reader.read(),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('not connected within 5 s')), 5_000)),
      ]);
      buffer += decoder.decode(chunk.value);
    }
    const other = new Redlock(api.cluster.urls, { retryCount: 0, maxTtlMs: api.maxTtlMs });
    try {
      const started = performance.now();
      const lock = await other.acquire('sse-grant', 5_000);
      let elapsed = -1;
      while (elapsed < 0) {
        const chunk = await Promise.race([
          reader.read(),
          new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no event within 2 s')), 2_000)),
        ]);
        buffer += decoder.decode(chunk.value);
        if (/event: lock\.granted\ndata: \{[^\n]*"resource":"sse-grant"/.test(buffer)) elapsed = performance.now() - started;
      }
      expect(elapsed).toBeLessThan(500);
      // The extend lengthens each key's lease, then rewrites its value (the extension count), and
      // the fenced grant's second round wrote the fence into it: neither rewrite is a grant.
      // pace: the extend comes a while after the grant, as a holder's would
      await new Promise((r) => setTimeout(r, 300));
      await lock.extend(8_000);
      await lock.release();
      const released = /event: lock\.released\ndata: \{[^\n]*"resource":"sse-grant"/;
      while (!released.test(buffer)) {
        const chunk = await Promise.race([
          reader.read(),
          new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no release event within 2 s')), 2_000)),
        ]);
        buffer += decoder.decode(chunk.value);
      }
      const kinds = [...buffer.matchAll(/event: (lock\.[a-z-]+)\ndata: \{[^\n]*"resource":"sse-grant"/g)].map((m) => m[1]);
      expect(kinds).toEqual(['lock.granted', 'lock.extended', 'lock.released']);
    } finally {
      await reader.cancel();
      await other.quit();
    }
  });

  it('a stream says connected only once the hub is subscribed: a grant right after it is never lost', async () => {
    // No other stream is open: this one starts the hub's sources (a subscription on every node).
    // pace: the previous test's stream is cancelled: give its hub time to stop, so this one starts it
    await new Promise((r) => setTimeout(r, 100));
    const res = await api.call('GET', '/api/events', { as: 'viewer' });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    const readUntil = async (pattern: RegExp, what: string) => {
      while (!pattern.test(buffer)) {
        const chunk = await Promise.race([
          reader.read(),
          new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no ${what} within 3 s`)), 3_000)),
        ]);
        buffer += decoder.decode(chunk.value);
      }
    };
    // Connected beforehand: the grant's SETs reach every node within a millisecond of `connected`.
    const nodes = [1, 2, 3, 4, 5].map((id) => api.cluster.client(id));
    try {
      await Promise.all(nodes.map((n) => n.connect()));
      await readUntil(/: connected \d+/, 'connected');
      await Promise.all(nodes.map((n) => n.set('rl:lock:sse-first', 'tok-first', 'PX', 5_000)));
      await readUntil(/event: lock\.granted\ndata: \{[^\n]*"resource":"sse-first"/, 'grant event');
    } finally {
      await reader.cancel();
      await Promise.all(nodes.map((n) => n.del('rl:lock:sse-first')));
      for (const n of nodes) n.disconnect();
    }
  });
});

describe('nodes', () => {
  it('reports health with a verdict; mark-clean inside maxTtl of a restart warns', async () => {
    const nodes = (await (await api.call('GET', '/api/nodes', { as: 'viewer' })).json()) as {
      verdict: { canGrant: boolean };
      nodes: Array<{ verdict: { level: string; reasons: string[] }; persistence: string }>;
    };
    expect(nodes.verdict.canGrant).toBe(true);
    expect(nodes.nodes[0]!.persistence).toBe('none');
    expect(nodes.nodes[0]!.verdict.reasons.join(' ')).toMatch(/persistence|restart/i);

    await api.call('POST', '/api/nodes/3/actions', { as: 'operator', body: { action: 'crash' } });
    await api.call('POST', '/api/nodes/3/actions', { as: 'operator', body: { action: 'restart' } });
    const res = await api.call('POST', '/api/nodes/3/mark-clean', { as: 'operator', body: { reason: 'we know it was empty' } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { warning: string | null }).warning).toMatch(
      /node 3: .* \d+ s ago, less than the lease ceiling|no epoch sentinel/,
    );
  });

  it('refuses a bad action state with 409 and an unknown node with 404', async () => {
    expect((await api.call('POST', '/api/nodes/1/actions', { as: 'operator', body: { action: 'resume' } })).status).toBe(409);
    expect((await api.call('POST', '/api/nodes/9/actions', { as: 'operator', body: { action: 'heal' } })).status).toBe(404);
  });
});
