import { slotExamples, type SlotAnalysis } from './check-slots';
import type { ControlOutcome } from './controls';
import { judgeLiveness, livenessFailure } from './liveness';
import { NEMESES } from './nemeses';
import type { PhaseOutcome } from './phase';
import type { ChaosProfile } from './profiles';
import type { ChaosReport, MutantAttempt, MutantReport, NemesisReport } from '../../lib/api/chaos-report';
import { TRIAL_DEFENCES } from './targeted';

/** What the targeted trials of a phase showed (null for a nemesis that is not targeted). */
export function targetedSummary(outcome: PhaseOutcome): NonNullable<NemesisReport['targeted']> | null {
  const kind = NEMESES[outcome.nemesis].targeted;
  if (!kind) return null;
  const t = outcome.trials;
  // Undefended trials first: they are the ones to read.
  const examples = [...t.filter((r) => !r.defended), ...t.filter((r) => r.defended)]
    .slice(0, 3)
    .map((r) => `${r.defended ? 'defended' : 'NOT defended'} (${r.defence ?? 'no defence seen'}): ${r.detail}`);
  return {
    trials: t.length,
    armed: t.filter((r) => r.armed).length,
    defended: t.filter((r) => r.defended).length,
    expectation: TRIAL_DEFENCES[kind],
    examples,
  };
}

/** The report row of a phase of the real core. */
export function nemesisReport(outcome: PhaseOutcome): NemesisReport {
  const { analysis: a, cost } = outcome;
  const f = a.fencing;
  const h = a.hygiene;
  const targeted = targetedSummary(outcome);
  // A targeted phase proves something only where the defence was seen: every trial must show it.
  const defended = targeted === null || (targeted.trials > 0 && targeted.defended === targeted.trials);
  return {
    nemesis: outcome.nemesis,
    title: outcome.title,
    network: NEMESES[outcome.nemesis].network,
    durationMs: outcome.durationMs,
    cycles: outcome.cycles,
    faults: outcome.faults,
    successes: a.acquisitions.successes,
    successesUnderFault: a.acquisitions.successesUnderFault,
    fencedSuccesses: a.acquisitions.fencedSuccesses,
    unfencedSuccesses: a.acquisitions.unfencedSuccesses,
    failures: a.acquisitions.failures,
    failuresByClass: a.acquisitions.failuresByClass,
    overlaps: a.overlap.overlaps,
    fenceViolations: f.grantOrderViolations + f.registerViolations + f.duplicateFences,
    staleAcceptedFenced: f.staleAcceptedFenced,
    staleAcceptedUnfenced: f.staleAcceptedUnfenced,
    rejectedFenced: f.rejectedFenced,
    leakedKeys: h.leakedKeys,
    foreignDeletes: h.foreignDeletes,
    expiredGrants: h.expiredGrants,
    lateExtends: h.lateExtends,
    leftovers: h.leftovers,
    minValidityAtReturnMs: h.minValidityAtReturnMs,
    p50Ms: a.acquisitions.p50Ms,
    p99Ms: a.acquisitions.p99Ms,
    commandsPerAcquisition: cost.commandsPerAcquisition,
    scriptCallsPerAcquisition: cost.scriptCallsPerAcquisition,
    costApproximate: NEMESES[outcome.nemesis].restartsNodes ?? false,
    violations: a.violations,
    examples: examplesOf(outcome),
    shortfall: outcome.shortfall,
    clientErrors: outcome.clientErrors.length,
    targeted,
    slots: slotSummary(a.slots),
    liveness: null,
    passed: a.violations === 0 && defended,
  };
}

/** The report's figures of the slot checkers. */
export function slotSummary(s: SlotAnalysis): NonNullable<NemesisReport['slots']> {
  const f = s.fencing;
  const h = s.hygiene;
  return {
    permits: s.grants.sem,
    reads: s.grants.read,
    writes: s.grants.write,
    failures: s.failures,
    failuresByClass: s.failuresByClass,
    p50Ms: s.p50Ms,
    p99Ms: s.p99Ms,
    capacity: s.capacity.violations,
    rwExclusion: s.rwExclusion.violations,
    slotOverlaps: s.slotOverlap.overlaps,
    slotFenceViolations: f.grantOrderViolations + f.registerViolations + f.duplicateFences + f.staleAcceptedFenced,
    rejectedFenced: f.rejectedFenced,
    hygiene: h.leakedKeys + h.foreignDeletes + h.expiredGrants + h.lateExtends + h.leftovers,
  };
}

export function examplesOf(outcome: PhaseOutcome): string[] {
  const a = outcome.analysis;
  const overlaps = a.overlap.examples.map(
    (e) => `overlap on ${e.resource}: ${e.first} and ${e.second} held it together for ${e.overlapMs.toFixed(1)} ms`,
  );
  return [...overlaps, ...a.fencing.examples, ...a.hygiene.examples, ...slotExamples(a.slots)].slice(0, 10);
}

export function mutantAttempt(outcome: PhaseOutcome): MutantAttempt {
  return {
    nemesis: outcome.nemesis,
    violations: outcome.analysis.violations,
    checkers: outcome.analysis.caughtBy,
    successes: outcome.analysis.acquisitions.successes,
    durationMs: outcome.durationMs,
    examples: examplesOf(outcome).slice(0, 3),
  };
}

export interface ReportInput {
  profile: ChaosProfile;
  seed: number;
  startedAt: Date;
  durationMs: number;
  host: ChaosReport['host'];
  phases: PhaseOutcome[];
  controls: ControlOutcome[];
  mutants: MutantReport[];
}

/** Assemble the report and its verdict: every safe phase clean, every control passed, every mutant caught. */
export function buildReport(input: ReportInput): ChaosReport {
  const { profile } = input;
  const nemeses = input.phases.map(nemesisReport);
  const failures: string[] = [];
  const warnings: string[] = [];
  const baseline = nemeses.find((n) => n.nemesis === 'none');
  const baselinePerS = baseline && baseline.durationMs > 0 ? baseline.successes / (baseline.durationMs / 1000) : null;
  for (const [i, n] of nemeses.entries()) {
    const quorum = NEMESES[input.phases[i]!.nemesis].keepsQuorum;
    if (!quorum) continue;
    n.liveness = judgeLiveness(n, baselinePerS, quorum);
    if (!n.liveness.passed) {
      n.passed = false;
      failures.push(livenessFailure(n.nemesis, n.liveness));
    }
  }
  for (const n of nemeses) {
    if (n.violations > 0) failures.push(`${n.nemesis}: ${n.violations} safety violation(s) with the real core`);
    if (n.shortfall) warnings.push(`${n.nemesis}: ${n.successes} successful acquisitions, short of the target ${profile.targetPerNemesis}`);
    const t = n.targeted;
    if (t && (t.trials === 0 || t.defended < t.trials)) {
      failures.push(
        `${n.nemesis}: the safe core's defence (${t.expectation}) was seen in ${t.defended} of ${t.trials} targeted trial(s)` +
          (t.examples[0] ? `, e.g. ${t.examples[0]}` : ''),
      );
    }
    if (t && t.armed < t.trials) warnings.push(`${n.nemesis}: the danger was in place in ${t.armed} of ${t.trials} targeted trial(s) only`);
  }
  for (const p of input.phases) {
    if (p.clientErrors.length === 0) continue;
    const first = p.clientErrors[0]!.split('\n')
      .slice(0, 4)
      .map((l) => l.trim())
      .join(' ← ');
    warnings.push(`${p.nemesis}: ${p.clientErrors.length} unhandled rejection(s) in the client processes, e.g. ${first}`);
  }
  for (const c of input.controls)
    if (!c.passed) failures.push(`control ${c.name} failed: expected ${c.expectation}, found ${c.found} of ${c.trials}`);
  for (const m of input.mutants) if (!m.caught) failures.push(`mutant ${m.name} (${m.description}) was not caught`);
  return {
    version: 1,
    profile: profile.name,
    seed: input.seed,
    startedAt: input.startedAt.toISOString(),
    durationMs: Math.round(input.durationMs),
    host: input.host,
    settings: {
      nodes: 5,
      clients: profile.clients,
      fencedClients: profile.fencedClients,
      loopsPerClient: profile.loopsPerClient,
      longLoopsPerClient: profile.longLoopsPerClient,
      ttlMs: profile.ttlMs,
      driftFactor: profile.driftFactor,
      nodeTimeoutMs: profile.nodeTimeoutMs,
      targetPerNemesis: profile.targetPerNemesis,
    },
    nemeses,
    controls: input.controls,
    mutants: input.mutants,
    mutantScore: { caught: input.mutants.filter((m) => m.caught).length, total: input.mutants.length },
    verdict: { passed: failures.length === 0, failures, warnings },
  };
}
