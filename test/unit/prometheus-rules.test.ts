import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findPromtool } from '../support/promtool';

// The alert rules are checked and unit-tested by Prometheus's own tool: each alert fires on a
// synthetic series that breaks its condition, with its annotations, and stays silent on a healthy one.
const dir = join(import.meta.dirname, '..', '..', 'deploy', 'prometheus');

describe('deploy/prometheus/alerts.yml', () => {
  it('passes promtool check rules and promtool test rules', () => {
    const promtool = findPromtool();
    const check = spawnSync(promtool, ['check', 'rules', 'alerts.yml'], { cwd: dir, encoding: 'utf8' });
    expect(check.status, check.stdout + check.stderr).toBe(0);
    const test = spawnSync(promtool, ['test', 'rules', 'alerts.test.yml'], { cwd: dir, encoding: 'utf8' });
    expect(test.status, test.stdout + test.stderr).toBe(0);
    expect(test.stdout).toMatch(/SUCCESS/);
  });
});
