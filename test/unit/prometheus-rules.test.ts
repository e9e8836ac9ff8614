import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { findPromtool } from '../support/promtool';

// The alert rules are checked and unit-tested by Prometheus's own tool: each alert fires on a
// synthetic series that breaks its condition, with its annotations, and stays silent on a healthy one.
const root = join(import.meta.dirname, '..', '..');
const dir = join(root, 'deploy', 'prometheus');

interface Rule {
  alert: string;
  expr: string;
  annotations?: Record<string, string>;
}
interface AlertTest {
  eval_time: string;
  alertname: string;
  exp_alerts: unknown[];
}
const rules = (parse(readFileSync(join(dir, 'alerts.yml'), 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);
const tests = (parse(readFileSync(join(dir, 'alerts.test.yml'), 'utf8')) as { tests: { alert_rule_test: AlertTest[] }[] }).tests.flatMap(
  (t) => t.alert_rule_test,
);

/** GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to hyphens. */
function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

describe('deploy/prometheus/alerts.yml', () => {
  it('passes promtool check rules and promtool test rules', () => {
    const promtool = findPromtool();
    const check = spawnSync(promtool, ['check', 'rules', 'alerts.yml'], { cwd: dir, encoding: 'utf8' });
    expect(check.status, check.stdout + check.stderr).toBe(0);
    const test = spawnSync(promtool, ['test', 'rules', 'alerts.test.yml'], { cwd: dir, encoding: 'utf8' });
    expect(test.status, test.stdout + test.stderr).toBe(0);
    expect(test.stdout).toMatch(/SUCCESS/);
  });

  it('covers what an operator is paged for, each alert tested firing and silent', () => {
    expect(rules.map((r) => r.alert).sort()).toEqual(
      [
        'RedlockAcquireFailuresHigh',
        'RedlockClockOffset',
        'RedlockConsoleDown',
        'RedlockLockHeldLong',
        'RedlockMetricsAbsent',
        'RedlockLocksSplitOrPartial',
        'RedlockNoQuorum',
        'RedlockNodeQuarantined',
        'RedlockNodeUnsafe',
        'RedlockNodeVoteRefused',
        'RedlockQuorumAtRisk',
      ].sort(),
    );
    for (const { alert } of rules) {
      const own = tests.filter((t) => t.alertname === alert);
      expect(
        own.some((t) => t.exp_alerts.length > 0),
        `${alert} fires in a test`,
      ).toBe(true);
      expect(
        own.some((t) => t.exp_alerts.length === 0),
        `${alert} stays silent in a test`,
      ).toBe(true);
    }
  });

  it('gives every alert a summary, a description and a runbook entry that exists in docs/operations.md', () => {
    const doc = readFileSync(join(root, 'docs', 'operations.md'), 'utf8');
    const anchors = new Set([...doc.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchor(m[1]!)));
    for (const rule of rules) {
      const a = rule.annotations ?? {};
      expect(a.summary?.length ?? 0, `${rule.alert} summary`).toBeGreaterThan(10);
      expect(a.description?.length ?? 0, `${rule.alert} description`).toBeGreaterThan(40);
      // Absolute: the base URL from Prometheus's external label runbook_base, a placeholder until set.
      const url = /^\{\{ or \$externalLabels\.runbook_base "(https:\/\/[^"]+\/docs\/operations\.md)" \}\}#(.+)$/.exec(a.runbook_url ?? '');
      expect(url, `${rule.alert} runbook_url ${a.runbook_url}`).not.toBeNull();
      expect(anchors.has(url![2]!), `${rule.alert}: no heading for #${url![2]} in docs/operations.md`).toBe(true);
      expect(doc, 'docs/operations.md says how to set the base').toContain('runbook_base');
    }
  });

  it("renders every runbook link absolute (promtool checks each firing alert's annotations)", () => {
    const rendered = tests.flatMap((t) => t.exp_alerts as Array<{ exp_annotations?: { runbook_url?: string } }>);
    expect(rendered.length).toBeGreaterThan(rules.length - 1);
    for (const alert of rendered) expect(alert.exp_annotations?.runbook_url).toMatch(/^https:\/\/[^/]+\/.+#[a-z]+$/);
  });

  it('alerts when the console or its scrape disappears, not only on what a scrape reports', () => {
    const byName = new Map(rules.map((r) => [r.alert, r.expr]));
    expect(byName.get('RedlockConsoleDown')).toBe('up{job="redlock-console"} == 0');
    expect(byName.get('RedlockMetricsAbsent')).toBe('absent(redlock_cluster_can_grant)');
  });
});
