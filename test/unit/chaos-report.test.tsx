import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderToStaticMarkup } from 'react-dom/server';
import { afterAll, describe, expect, it } from 'vitest';
import { ControlsTable, MutantsTable } from '../../components/chaos/checks-tables';
import { NemesisTable } from '../../components/chaos/nemesis-table';
import { analyzePhase } from '../../chaos/harness/analyze';
import type { PhaseOutcome } from '../../chaos/harness/phase';
import { PROFILES } from '../../chaos/harness/profiles';
import { buildReport } from '../../chaos/harness/report';
import { chaosReportPath, readChaosReport, readLatestOrReference, REFERENCE_REPORT } from '../../lib/server/chaos-report-file';
import { renderMarkdown } from '../../chaos/harness/report-markdown';
import { chaosReportSchema } from '../../lib/api/chaos-report';

const MS = 1_000_000;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function outcome(nemesis: PhaseOutcome['nemesis'], overlap: boolean): PhaseOutcome {
  const events = [
    { e: 'acquire-invoke', lock: 'a', client: 0, resource: 'f:r0', fenced: true, t: 0 },
    { e: 'acquire-ok', lock: 'a', t: 1 * MS, validUntil: 100 * MS, fence: 1, votes: 'fffff', validityAtReturnMs: 99 },
    { e: 'release-invoke', lock: 'a', t: 50 * MS },
    { e: 'acquire-invoke', lock: 'b', client: 1, resource: 'f:r0', fenced: true, t: 0 },
    { e: 'acquire-ok', lock: 'b', t: (overlap ? 20 : 60) * MS, validUntil: 160 * MS, fence: 2, votes: 'fffff', validityAtReturnMs: 99 },
    { e: 'release-invoke', lock: 'b', t: 90 * MS },
  ] as const;
  const analysis = analyzePhase({ events: [...events], register: [], nemesis: [], leakedKeys: [] }, { toleranceMs: 200, end: 200 * MS });
  return {
    id: nemesis,
    nemesis,
    title: 't',
    core: 'real',
    durationMs: 1_000,
    cycles: 3,
    faults: [],
    analysis,
    cost: { commandsPerAcquisition: 40, scriptCallsPerAcquisition: 12 },
    shortfall: true,
    clientErrors: [],
    trials: [],
  };
}

function report(overlap: boolean) {
  return buildReport({
    profile: PROFILES.ci,
    seed: 1,
    startedAt: new Date(0),
    durationMs: 5_000,
    host: { cpus: 2, loadAverage: [1, 1, 1], node: 'v20', redis: '7.0' },
    phases: [outcome('none', false), outcome('pause-client', overlap)],
    controls: [
      {
        name: 'pause-holder-unfenced',
        nemesis: 'pause-client',
        expectation: 'stale > 0',
        negative: true,
        trials: 3,
        found: 3,
        passed: true,
        details: ['3 stale'],
      },
    ],
    mutants: [
      {
        name: 'quorum-floor',
        description: 'quorum ⌊N/2⌋',
        caught: true,
        caughtBy: { nemesis: 'ring-partition', checkers: ['overlap'] },
        attempts: [
          {
            nemesis: 'ring-partition',
            violations: 4,
            checkers: ['overlap'],
            successes: 10,
            durationMs: 2_000,
            examples: ['overlap on f:r0'],
          },
        ],
      },
    ],
  });
}

function targetedOutcome(defended: readonly boolean[]): PhaseOutcome {
  const base = outcome('restart-rdb', false);
  return {
    ...base,
    shortfall: false,
    trials: defended.map((d, i) => ({
      kind: 'restart-rdb',
      id: `t${i}`,
      prefix: `p:t${i}:`,
      logs: [],
      victim: 1,
      majority: [0, 1, 2],
      armed: true,
      defence: d ? 'quarantined (restart)' : null,
      defended: d,
      label: `trial ${i}`,
      detail: `trial ${i} detail`,
    })),
  };
}

describe('chaos report', () => {
  it("a targeted nemesis passes only when every trial showed the safe core's defence, and lists its negative control", () => {
    const control = {
      name: 'restart-rdb-unchecked',
      nemesis: 'restart-rdb' as const,
      expectation: 'nodeChecks: false: overlap',
      negative: true,
      trials: 10,
      found: 10,
      passed: true,
      details: [],
    };
    const build = (defended: readonly boolean[]) =>
      buildReport({
        profile: PROFILES.ci,
        seed: 1,
        startedAt: new Date(0),
        durationMs: 5_000,
        host: { cpus: 2, loadAverage: [1, 1, 1], node: 'v20', redis: '7.0' },
        phases: [targetedOutcome(defended)],
        controls: [control],
        mutants: [],
      });
    const good = build([true, true]);
    expect(chaosReportSchema.parse(good)).toEqual(good);
    expect(good.verdict.passed).toBe(true);
    expect(good.nemeses[0]!.targeted).toMatchObject({ trials: 2, armed: 2, defended: 2 });
    expect(renderMarkdown(good)).toContain('| restart-rdb | 2 | 2 | 2 |');
    expect(renderMarkdown(good)).toContain('restart-rdb-unchecked: 10 of 10 ✅');
    const bad = build([true, false]);
    expect(bad.verdict.passed).toBe(false);
    expect(bad.nemeses[0]!.passed).toBe(false);
    expect(bad.verdict.failures[0]).toMatch(
      /restart-rdb: the safe core's defence .* was seen in 1 of 2 targeted trial\(s\), e\.g\. NOT defended .*trial 1 detail/,
    );
    // No trial at all proves nothing either.
    expect(build([]).verdict.passed).toBe(false);
  });

  it('liveness: a nemesis that keeps a quorum fails the run on QuorumUnavailableErrors or a throughput collapse; one that does not is not judged', () => {
    const phase = (nemesis: PhaseOutcome['nemesis'], durationMs: number, unavailable: number): PhaseOutcome => {
      const base = outcome(nemesis, false);
      const acquisitions = {
        ...base.analysis.acquisitions,
        failures: unavailable,
        failuresByClass: (unavailable ? { QuorumUnavailableError: unavailable } : {}) as Record<string, number>,
      };
      return { ...base, durationMs, analysis: { ...base.analysis, acquisitions } };
    };
    const build = (...phases: PhaseOutcome[]) =>
      buildReport({
        profile: PROFILES.ci,
        seed: 1,
        startedAt: new Date(0),
        durationMs: 5_000,
        host: { cpus: 2, loadAverage: [1, 1, 1], node: 'v20', redis: '7.0' },
        phases,
        controls: [],
        mutants: [],
      });
    // 2 acquisitions in 1 s without faults; the paused node's phase: 2 in 1 s (ok), 2 in 20 s (a collapse), or 3 unavailable.
    const ok = build(phase('none', 1_000, 0), phase('pause-node', 1_000, 0));
    expect(ok.verdict.passed).toBe(true);
    expect(ok.nemeses[1]!.liveness).toMatchObject({ unavailable: 0, ratePerS: 2, floorPerS: 0.4, passed: true });
    const slow = build(phase('none', 1_000, 0), phase('pause-node', 20_000, 0));
    expect(slow.verdict.passed).toBe(false);
    expect(slow.nemeses[1]!.passed).toBe(false);
    expect(slow.verdict.failures[0]).toMatch(/pause-node: liveness: 0 acquisitions\/s, under the floor of 0/);
    const unavailable = build(phase('none', 1_000, 0), phase('pause-node', 1_000, 3));
    expect(unavailable.verdict.failures[0]).toMatch(/pause-node: liveness: 3 QuorumUnavailableError\(s\) \(at most 2\)/);
    expect(renderMarkdown(unavailable)).toContain('| pause-node | 3 (≤ 2) |');
    // A majority blackholed: unavailability is expected there, so it is not judged.
    const majority = build(phase('none', 1_000, 0), phase('blackhole-majority', 20_000, 3));
    expect(majority.nemeses[1]!.liveness).toBeNull();
    expect(majority.verdict.passed).toBe(true);
  });

  it('reports of older runs (no targeted block, controls without a nemesis) still parse', () => {
    const old = JSON.parse(JSON.stringify(report(false))) as { nemeses: Record<string, unknown>[]; controls: Record<string, unknown>[] };
    for (const n of old.nemeses) delete n.targeted;
    for (const c of old.controls) delete c.nemesis;
    expect(chaosReportSchema.safeParse(old).success).toBe(true);
  });

  it('passes when every safe phase is clean, every control passed and every mutant was caught; fails on a violation', () => {
    const clean = report(false);
    expect(chaosReportSchema.parse(clean)).toEqual(clean);
    expect(clean.verdict.passed).toBe(true);
    expect(clean.verdict.warnings[0]).toMatch(/short of the target 2000/);
    const broken = report(true);
    expect(broken.verdict.passed).toBe(false);
    expect(broken.verdict.failures).toEqual(['pause-client: 1 safety violation(s) with the real core']);
    expect(renderMarkdown(broken)).toContain('| pause-client | direct | 2 (0) ⚠ | — | 1 |');
  });

  it('renders a table per nemesis, the controls and the mutants with their verdicts', () => {
    const r = report(true);
    const nemeses = renderToStaticMarkup(<NemesisTable rows={r.nemeses} target={r.settings.targetPerNemesis} />);
    expect(nemeses).toContain('data-nemesis="pause-client"');
    expect(nemeses.match(/data-verdict="fail"/g)).toHaveLength(1);
    expect(renderToStaticMarkup(<ControlsTable rows={r.controls} />)).toContain('3 of 3');
    expect(renderToStaticMarkup(<MutantsTable rows={r.mutants} />)).toContain('ring-partition → overlap');
  });

  it('reads the latest report, and says why when there is none or it is not one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chaos-report-test-'));
    dirs.push(dir);
    const path = join(dir, 'latest.json');
    expect(chaosReportPath({ REDLOCK_CHAOS_REPORT: path }, '/x')).toBe(path);
    expect(chaosReportPath({}, '/x')).toBe('/x/chaos/reports/latest.json');
    expect(await readChaosReport(path, dir)).toMatchObject({
      ok: false,
      reason: 'missing',
      message: expect.stringContaining('npm run chaos'),
    });
    writeFileSync(path, '{"version":0}');
    expect(await readChaosReport(path, dir)).toMatchObject({ ok: false, reason: 'invalid' });
    writeFileSync(path, JSON.stringify(report(false)));
    const read = await readChaosReport(path, dir);
    expect(read).toMatchObject({ ok: true, value: { source: 'latest.json', report: { seed: 1 } } });
  });

  it("ships the CI profile's report, valid for this version, and shows it (marked) until this machine has its own", async () => {
    const root = join(__dirname, '../..');
    const shipped = await readChaosReport(join(root, REFERENCE_REPORT), root);
    expect(shipped).toMatchObject({ ok: true, value: { report: { profile: 'ci', verdict: { passed: true } } } });

    const dir = mkdtempSync(join(tmpdir(), 'chaos-reference-test-'));
    dirs.push(dir);
    const own = join(dir, 'latest.json');
    const fallback = await readLatestOrReference(own, root);
    expect(fallback).toMatchObject({
      ok: true,
      value: { source: REFERENCE_REPORT, reference: { note: expect.stringContaining('no report of its own') } },
    });
    // A broken report of this machine's own is said to be broken, not replaced by the reference.
    writeFileSync(own, '{"version":0}');
    expect(await readLatestOrReference(own, root)).toMatchObject({ ok: false, reason: 'invalid' });
    writeFileSync(own, JSON.stringify(report(false)));
    expect(await readLatestOrReference(own, root)).toMatchObject({ ok: true, value: { reference: null, report: { seed: 1 } } });
  });
});
