import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METRICS_TOKEN, startApi, type ApiHarness } from '../support/api';
import { findPromtool } from '../support/promtool';
import { withoutReplica } from '../support/metrics-text';

/**
 * Counters whose label values are known in advance are in a fresh console's first
 * scrape at 0 (the force-release counter was absent until the first force-release, so
 * `increase()` missed it and its panel read "No data"). A real console's route handlers on real
 * redis-server masters, scraped before anything else happened.
 */
let api: ApiHarness;
let first = '';

const scrape = async () => {
  const res = await api.call('GET', '/api/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(res.status).toBe(200);
  return withoutReplica(await res.text());
};
/** The value of one sample (`name{labels}` exactly as exported), or undefined when absent. */
const value = (text: string, series: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

beforeAll(async () => {
  api = await startApi({ nodes: 3 });
  first = await scrape();
}, 60_000);
afterAll(async () => {
  await api?.stop();
});

describe("a fresh console's /api/metrics", () => {
  it('has every force-release outcome at 0 before the first force-release', () => {
    for (const outcome of ['ok', 'partial', 'nothing-deleted'])
      expect(value(first, `redlock_force_releases_total{outcome="${outcome}"}`), outcome).toBe(0);
  });

  it('has every lock operation × outcome at 0, and the acquire histogram by outcome, before the first request', () => {
    const outcomes = [
      'ok',
      'LockContendedError',
      'QuorumUnavailableError',
      'LockExpiredError',
      'InvalidArgumentError',
      'MaxTtlMismatchError',
      'SemaphoreLimitMismatchError',
    ];
    for (const operation of ['acquire', 'extend', 'release'])
      for (const outcome of outcomes)
        expect(value(first, `redlock_operations_total{operation="${operation}",outcome="${outcome}"}`), `${operation} ${outcome}`).toBe(0);
    for (const outcome of outcomes) {
      expect(value(first, `redlock_acquire_duration_seconds_count{outcome="${outcome}"}`), outcome).toBe(0);
      expect(value(first, `redlock_acquire_duration_seconds_bucket{le="+Inf",outcome="${outcome}"}`), outcome).toBe(0);
    }
  });

  it('is lint-clean under promtool check metrics, and counts from those zeros', async () => {
    const check = spawnSync(findPromtool(), ['check', 'metrics'], { input: first, encoding: 'utf8' });
    expect(check.status, check.stdout + check.stderr).toBe(0);
    const granted = await api.call('POST', '/api/locks', { as: 'client', body: { resource: 'zero-1', ttlMs: 2_000 } });
    expect(granted.status).toBe(200);
    const after = await scrape();
    expect(value(after, 'redlock_operations_total{operation="acquire",outcome="ok"}')).toBe(1);
    expect(value(after, 'redlock_operations_total{operation="acquire",outcome="LockContendedError"}')).toBe(0);
    expect(value(after, 'redlock_force_releases_total{outcome="ok"}')).toBe(0);
    // Quarantines by node × cause: from the lock core's start (the console's server starts it
    // before the first request; here the first acquire did).
    for (const node of ['1', '2', '3']) expect(value(after, `redlock_quarantines_started_total{node="${node}",cause="restart"}`)).toBe(0);
  });
});
