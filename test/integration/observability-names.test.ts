import { spawnSync } from 'node:child_process';
import { withoutReplica } from '../support/metrics-text';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { LockGrant } from '../../lib/api/locks';
import type { NodesResponse } from '../../lib/api/nodes';
import { METRICS_TOKEN, startApi, type ApiHarness } from '../support/api';
import { findPromtool } from '../support/promtool';

// The operator's observability pack (deploy/) against what the console really exports: a live
// /api/metrics of the console's route handlers on five real redis-server masters, after the
// events each metric reports (a restart, an over-ceiling key, a failed extend, a force-release…).
const root = join(import.meta.dirname, '..', '..');
const MAX_TTL_MS = 30_000;

interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  datasource?: { type: string; uid: string };
  targets?: { refId: string; expr: string; datasource?: { uid: string } }[];
}
interface Dashboard {
  title: string;
  uid: string;
  schemaVersion: number;
  panels: Panel[];
  templating: { list: { name: string; type: string; query: unknown; definition?: string }[] };
}
const dashboard = JSON.parse(readFileSync(join(root, 'deploy', 'grafana', 'redlock.json'), 'utf8')) as Dashboard;
const rules = (
  parse(readFileSync(join(root, 'deploy', 'prometheus', 'alerts.yml'), 'utf8')) as {
    groups: { rules: { alert: string; expr: string }[] }[];
  }
).groups.flatMap((g) => g.rules);

/** Every PromQL expression of the pack, named by where it is. */
function expressions(): { where: string; expr: string }[] {
  const out = rules.map((r) => ({ where: `alerts.yml ${r.alert}`, expr: r.expr }));
  for (const p of dashboard.panels)
    for (const t of p.targets ?? []) out.push({ where: `redlock.json panel ${p.id} "${p.title}" ${t.refId}`, expr: t.expr });
  for (const v of dashboard.templating.list) if (v.definition) out.push({ where: `redlock.json variable ${v.name}`, expr: v.definition });
  return out;
}

/** Metric names in an expression (ours all start redlock_), and the label names its selectors match on. */
function usedIn(expr: string): { metric: string; labels: string[] }[] {
  const out: { metric: string; labels: string[] }[] = [];
  for (const m of expr.matchAll(/\b(redlock_[a-zA-Z0-9_:]*)\b(\s*\{([^}]*)\})?/g)) {
    const labels = [...(m[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g)].map((l) => l[1]!);
    out.push({ metric: m[1]!, labels });
  }
  return out;
}

/** Label names Prometheus adds at scrape time: not in the exposition, legitimately in a query. */
const TARGET_LABELS = new Set(['instance', 'job']);

/** Sample names of an exposition (histogram series included) with the label names each carries. */
function samples(text: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? /.exec(line);
    if (!m) continue;
    const labels = out.get(m[1]!) ?? new Set<string>();
    for (const l of (m[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)) labels.add(l[1]!);
    out.set(m[1]!, labels);
  }
  return out;
}

/** The value of one sample, e.g. value(text, 'redlock_locks{state="held"}'), or undefined. */
function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('the observability pack against a live /api/metrics', () => {
  let api: ApiHarness;
  let scrape = '';
  /** The scrape as exported, the replica label included (scrape drops it for value()). */
  let rawScrape = '';
  let noSentinel = '';

  beforeAll(async () => {
    api = await startApi({ nodes: 5, maxTtlMs: MAX_TTL_MS });
    const grant = async (resource: string): Promise<LockGrant> => {
      const res = await api.call('POST', '/api/locks', {
        as: 'client',
        body: { resource, ttlMs: 20_000, metadata: { purpose: 'metrics' } },
      });
      expect(res.status, await res.clone().text()).toBe(200);
      return (await res.json()) as LockGrant;
    };
    // The oldest lock, then a younger one; the young one is force-released by an operator.
    await grant('obs-oldest');
    // pace: the oldest lock is 1.5 s older than the young one
    await new Promise((r) => setTimeout(r, 1_500));
    const young = await grant('obs-young');
    const released = await api.call('POST', '/api/locks/obs-young/force-release', {
      as: 'operator',
      body: { token: young.token, reason: 'metrics test' },
    });
    expect(released.status).toBe(200);
    // An extend of a lock that is not held fails.
    const extend = await api.call('POST', '/api/locks/obs-young/extend', { as: 'client', body: { token: young.token, ttlMs: 5_000 } });
    expect(extend.status).toBeGreaterThanOrEqual(400);
    // Keys another client wrote: a lease above the ceiling on a majority, and a partial lock on one node.
    const direct = async (id: number) => {
      const c = api.cluster.client(id);
      await c.connect();
      return c;
    };
    for (const id of [1, 2, 3]) await (await direct(id)).set('rl:lock:obs-over', 'foreign-token', 'PX', MAX_TTL_MS * 10);
    await (await direct(4)).set('rl:lock:obs-partial', 'lone-token', 'PX', MAX_TTL_MS);
    // Master 5 crashes and comes back without its data: the lock core quarantines it.
    await api.cluster.supervisor.crash(5);
    await api.cluster.supervisor.restart(5);
    await api.cluster.supervisor.waitUntilUp(5);
    // Until an acquire reaches it, master 5 has no epoch sentinel (reason no-sentinel); the lock
    // core's next acquire there records why it is quarantined.
    const node5 = async () =>
      ((await (await api.call('GET', '/api/nodes', { as: 'viewer' })).json()) as NodesResponse).nodes[4]!.quarantine?.state;
    expect(await node5()).toBe('unknown');
    const before = await api.call('GET', '/api/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    noSentinel = withoutReplica(await before.text());
    for (let i = 0; (await node5()) !== 'quarantined'; i++) {
      expect(i, 'master 5 quarantined by an acquire').toBeLessThan(50);
      const probe = await grant(`obs-probe-${i}`);
      await api.call('POST', `/api/locks/obs-probe-${i}/release`, { as: 'client', body: { token: probe.token } });
    }
    await grant('obs-after-restart');
    // A scrape reads a lock snapshot at most 1 s old: let the one the first scrape made age out.
    // pace: a scrape reads a lock snapshot at most 1 s old: let the first one age out
    await new Promise((r) => setTimeout(r, 1_100));
    const res = await api.call('GET', '/api/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status).toBe(200);
    rawScrape = await res.text();
    scrape = withoutReplica(rawScrape);
  }, 60_000);
  afterAll(async () => {
    await api?.stop();
  });

  it('lints clean with promtool check metrics', () => {
    const lint = spawnSync(findPromtool(), ['check', 'metrics'], { input: scrape, encoding: 'utf8' });
    expect(lint.status, lint.stdout + lint.stderr).toBe(0);
  });

  it('exports what an operator needs, with the values the cluster has', () => {
    expect(value(scrape, 'redlock_cluster_quorum')).toBe(3);
    expect(value(scrape, 'redlock_cluster_usable_nodes')).toBe(4);
    expect(value(scrape, 'redlock_cluster_can_grant')).toBe(1);
    // Master 5 lost its data in the crash: before an acquire reaches it, it has no sentinel and sits
    // out at least the ceiling; then the core has quarantined it for a restart that lost its data.
    expect(value(noSentinel, 'redlock_node_quarantined{node="5",reason="no-sentinel"}')).toBe(1);
    expect(value(noSentinel, 'redlock_node_quarantine_remaining_seconds{node="5",reason="no-sentinel"}')).toBe(MAX_TTL_MS / 1000);
    expect(value(noSentinel, 'redlock_cluster_usable_nodes')).toBe(4);
    const quarantined = /^redlock_node_quarantined\{node="5",reason="([a-z-]+)"\} 1$/m.exec(scrape);
    expect(quarantined?.[1]).toMatch(/^(data-loss|restart)$/);
    expect(scrape).not.toMatch(/^redlock_node_quarantined\{node="5",reason="no-sentinel"\}/m);
    const left = value(scrape, `redlock_node_quarantine_remaining_seconds{node="5",reason="${quarantined![1]}"}`)!;
    expect(left).toBeGreaterThan(MAX_TTL_MS / 1000 - 15);
    expect(left).toBeLessThanOrEqual(MAX_TTL_MS / 1000);
    expect(value(scrape, 'redlock_node_quarantined{node="1",reason="none"}')).toBe(0);
    // Quarantines the console's core started, by cause: every node and cause present at zero (an
    // alert on an increase sees the first one), node 5's restart or data loss counted once at least.
    expect(value(scrape, 'redlock_quarantines_started_total{node="1",cause="rollback"}')).toBe(0);
    expect(value(scrape, 'redlock_quarantines_started_total{node="3",cause="clock-jump"}')).toBe(0);
    expect(value(scrape, `redlock_quarantines_started_total{node="5",cause="${quarantined![1]}"}`)).toBeGreaterThanOrEqual(1);
    expect(value(scrape, 'redlock_node_refused{node="1",reason="unsafe-eviction"}')).toBe(0);
    expect(value(scrape, 'redlock_drift_allowance_seconds')).toBeCloseTo((MAX_TTL_MS * 0.01 + 2) / 1000, 6);
    // Locks by state and flagged: two held (obs-oldest, obs-after-restart) and the foreign over-ceiling one.
    expect(value(scrape, 'redlock_locks{state="held"}')).toBe(3);
    expect(value(scrape, 'redlock_locks{state="partial"}')).toBe(1);
    expect(value(scrape, 'redlock_locks_flagged{flag="over_ceiling"}')).toBe(1);
    expect(value(scrape, 'redlock_locks_flagged{flag="no_ttl"}')).toBe(0);
    // The oldest lock with metadata is obs-oldest, at least 1.5 s old by now (the foreign key has none).
    const age = value(scrape, 'redlock_lock_oldest_age_seconds')!;
    expect(age).toBeGreaterThanOrEqual(1.5);
    expect(age).toBeLessThan(30);
    expect(value(scrape, 'redlock_force_releases_total{outcome="ok"}')).toBe(1);
    expect(scrape).toMatch(/^redlock_operations_total\{operation="extend",outcome="(?!ok")[A-Za-z]+"\} 1$/m);
    expect(value(scrape, 'redlock_acquire_duration_seconds_count{outcome="ok"}')).toBeGreaterThanOrEqual(4);
  });

  it('knows every metric name and label the dashboard and the alert rules query', () => {
    const exported = samples(rawScrape);
    const missing: string[] = [];
    let checked = 0;
    for (const { where, expr } of expressions()) {
      for (const { metric, labels } of usedIn(expr)) {
        checked++;
        const has = exported.get(metric);
        if (!has) missing.push(`${where}: ${metric}`);
        for (const label of labels) if (has && !TARGET_LABELS.has(label) && !has.has(label)) missing.push(`${where}: ${metric}{${label}}`);
      }
    }
    expect(checked).toBeGreaterThan(30);
    expect(missing).toEqual([]);
  });
});

describe('deploy/grafana/redlock.json', () => {
  it('is a Grafana dashboard on a Prometheus datasource variable, every panel a query on a 24-column grid', () => {
    expect(dashboard).toMatchObject({ title: 'Redlock', uid: 'redlock-console' });
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    expect(dashboard.templating.list.find((v) => v.name === 'DS_PROMETHEUS')).toMatchObject({ type: 'datasource', query: 'prometheus' });
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const cells = new Set<string>();
    for (const p of dashboard.panels) {
      expect(p.datasource, p.title).toEqual({ type: 'prometheus', uid: '${DS_PROMETHEUS}' });
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets!) expect(t.expr.trim(), `${p.title} ${t.refId}`).not.toBe('');
      const { x, y, w, h } = p.gridPos;
      expect(x >= 0 && w > 0 && h > 0 && x + w <= 24, `${p.title} gridPos`).toBe(true);
      // No two panels on one grid cell.
      for (let i = x; i < x + w; i++)
        for (let j = y; j < y + h; j++) {
          expect(cells.has(`${i},${j}`), `${p.title} overlaps at ${i},${j}`).toBe(false);
          cells.add(`${i},${j}`);
        }
    }
    // The overview's views, each on the dashboard.
    const exprs = dashboard.panels.flatMap((p) => p.targets!.map((t) => t.expr)).join('\n');
    for (const metric of [
      'redlock_cluster_can_grant',
      'redlock_cluster_usable_nodes',
      'redlock_cluster_quorum',
      'redlock_node_up',
      'redlock_node_rtt_seconds',
      'redlock_node_clock_offset_seconds',
      'redlock_node_quarantine_remaining_seconds',
      'redlock_locks',
      'redlock_locks_flagged',
      'redlock_acquire_duration_seconds_bucket',
      'redlock_operations_total',
      'redlock_force_releases_total',
      'redlock_lock_oldest_age_seconds',
    ])
      expect(exprs).toContain(metric);
    expect(exprs).toMatch(/histogram_quantile\(0\.99, sum by \(le, outcome\)/);
  });

  it("picks replicas (consoles and lock services) by the replica label every series carries, and shows each one's share", () => {
    const variable = dashboard.templating.list.find((v) => v.name === 'replica');
    expect(variable).toMatchObject({ type: 'query', includeAll: true, multi: true, definition: 'label_values(replica)' });
    // Every selector of every panel is narrowed by it (a panel that ignores it would show all replicas under a pick).
    for (const p of dashboard.panels)
      for (const t of p.targets!)
        for (const { metric, labels } of usedIn(t.expr)) expect(labels, `${p.title} ${t.refId} ${metric}`).toContain('replica');
    expect(dashboard.panels.flatMap((p) => p.targets!.map((t) => t.expr))).toContainEqual(
      expect.stringMatching(/sum by \(replica, operation\) \(rate\(redlock_operations_total\{replica=~"\$replica"\}/),
    );
  });
});
