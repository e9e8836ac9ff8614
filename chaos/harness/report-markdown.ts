import type { ChaosReport, NemesisReport } from '../../lib/api/chaos-report';

const num = (v: number | null, digits = 0) => (v === null ? '—' : v.toLocaleString('en-US', { maximumFractionDigits: digits }));
const badge = (ok: boolean) => (ok ? '✅ pass' : '❌ FAIL');

function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s} s`;
}

function failureClasses(n: NemesisReport): string {
  const entries = Object.entries(n.failuresByClass).sort((a, b) => b[1] - a[1]);
  return entries.length ? entries.map(([k, v]) => `${k.replace(/Error$/, '')} ${v}`).join(', ') : '—';
}

/** The semaphores' and read-write locks' figures per nemesis (none in reports of older runs). */
function slotSection(r: ChaosReport): string[] {
  const rows = r.nemeses.filter((n) => n.slots);
  if (rows.length === 0) return [];
  const lines = [
    '',
    '## Semaphores and read-write locks',
    '',
    'Taken beside the locks in every phase (chaos/harness/check-slots.ts): more permits held at once than the limit, ' +
      'a writer with a reader or another writer, two holders of one slot, fences out of order per slot, and the hygiene ' +
      'of their keys.',
    '',
    '| nemesis | permits / reads / writes granted | refused by class | over the limit | writer with another holder | slot overlaps | slot fence violations | refused by fence | hygiene | p50 / p99 acquire ms |',
    '|---|--:|---|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const n of rows) {
    const x = n.slots!;
    const refused = Object.entries(x.failuresByClass)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k.replace(/Error$/, '')} ${v}`)
      .join(', ');
    lines.push(
      `| ${n.nemesis} | ${num(x.permits)} / ${num(x.reads)} / ${num(x.writes)} | ${refused || '—'} | ${x.capacity} | ${x.rwExclusion} | ` +
        `${x.slotOverlaps} | ${x.slotFenceViolations} | ${x.rejectedFenced} | ${x.hygiene} | ${num(x.p50Ms, 1)} / ${num(x.p99Ms, 1)} |`,
    );
  }
  return lines;
}

/** The report as Markdown: what the console shows, for a terminal or a pull request. */
export function renderMarkdown(r: ChaosReport): string {
  const s = r.settings;
  const violations = r.nemeses.reduce((sum, n) => sum + n.violations, 0);
  const controlsPassed = r.controls.filter((c) => c.passed).length;
  const lines: string[] = [
    `# Chaos report: profile ${r.profile}, seed ${r.seed}`,
    '',
    `**${r.verdict.passed ? 'PASS' : 'FAIL'}**: ${r.nemeses.length} nemeses, ${violations} safety violation(s) with the real core; ` +
      `controls ${controlsPassed}/${r.controls.length} passed; mutants caught ${r.mutantScore.caught}/${r.mutantScore.total}.`,
    '',
    `Run of ${duration(r.durationMs)} started ${r.startedAt} on ${r.host.cpus} CPUs (load ${r.host.loadAverage.join(' ')}), ` +
      `Node ${r.host.node}, redis-server ${r.host.redis}. ${s.nodes} masters; ${s.clients} client processes (${s.fencedClients} fenced, ` +
      `${s.clients - s.fencedClients} unfenced), each with ${s.loopsPerClient} hot + ${s.longLoopsPerClient} long lock loop(s); ttl ${s.ttlMs} ms, ` +
      `driftFactor ${s.driftFactor}, node timeout ${s.nodeTimeoutMs} ms; target ${num(s.targetPerNemesis)} acquisitions per nemesis.`,
    '',
    '## Per nemesis',
    '',
    '| nemesis | path | acquisitions (under fault) | failures by class | overlaps | fence violations | stale writes accepted fenced / unfenced | refused by fence | leaked keys | foreign deletes | expired grants | late extends | leftovers (rejected, released) | p50 / p99 acquire ms | commands (scripts) per acquisition | result |',
    '|---|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|',
  ];
  for (const n of r.nemeses) {
    lines.push(
      `| ${n.nemesis} | ${n.network} | ${num(n.successes)} (${num(n.successesUnderFault)})${n.shortfall ? ' ⚠' : ''} | ${failureClasses(n)} | ` +
        `${n.overlaps} | ${n.fenceViolations} | ${n.staleAcceptedFenced} / ${n.staleAcceptedUnfenced} | ${n.rejectedFenced} | ${n.leakedKeys} | ` +
        `${n.foreignDeletes} | ${n.expiredGrants} | ${n.lateExtends} | ${n.leftovers} | ${num(n.p50Ms, 1)} / ${num(n.p99Ms, 1)} | ` +
        `${num(n.commandsPerAcquisition, 1)} (${num(n.scriptCallsPerAcquisition, 1)})${n.costApproximate ? ' ≥' : ''} | ${badge(n.passed)} |`,
    );
  }
  lines.push('', 'Nemeses:', '');
  for (const n of r.nemeses)
    lines.push(
      `- **${n.nemesis}**: ${n.title}; ${n.cycles} cycles in ${duration(n.durationMs)}${n.faults[0] ? `, e.g. ${n.faults[0]}` : ''}.`,
    );
  lines.push(...slotSection(r));
  const live = r.nemeses.filter((n) => n.liveness);
  if (live.length) {
    lines.push(
      '',
      '## Liveness',
      '',
      'Nemeses that keep a quorum reachable for every client must not fail acquires for unavailability, nor collapse in throughput ' +
        '(chaos/harness/liveness.ts).',
      '',
      '| nemesis | QuorumUnavailableError (allowed) | acquisitions/s (floor) | result |',
      '|---|--:|--:|---|',
    );
    for (const n of live) {
      const l = n.liveness!;
      lines.push(
        `| ${n.nemesis} | ${l.unavailable} (≤ ${l.allowedUnavailable}) | ${num(l.ratePerS)} (${l.floorPerS === null ? 'no baseline' : `≥ ${num(l.floorPerS)}`}) | ${badge(l.passed)} |`,
      );
    }
  }
  const targeted = r.nemeses.filter((n) => n.targeted);
  if (targeted.length) {
    lines.push(
      '',
      '## Targeted nemeses',
      '',
      "Each cycle creates the danger on purpose (the holder's keys on a bare majority, one node of which loses data); " +
        'the safe core must show its defence in every trial, and the negative control must be caught.',
      '',
      '| nemesis | trials | danger in place | defence seen | expected defence | negative control |',
      '|---|--:|--:|--:|---|---|',
    );
    for (const n of targeted) {
      const t = n.targeted!;
      const controls = r.controls
        .filter((c) => c.nemesis === n.nemesis && c.negative)
        .map((c) => `${c.name}: ${c.found} of ${c.trials} ${c.passed ? '✅' : '❌'}`);
      lines.push(`| ${n.nemesis} | ${t.trials} | ${t.armed} | ${t.defended} | ${t.expectation} | ${controls.join('; ') || '—'} |`);
    }
  }
  lines.push('', '## Negative controls', '', '| control | nemesis | expectation | found | result |', '|---|---|---|--:|---|');
  for (const c of r.controls)
    lines.push(`| ${c.name} | ${c.nemesis ?? '—'} | ${c.expectation} | ${c.found} of ${c.trials} | ${badge(c.passed)} |`);
  lines.push(
    '',
    `## Mutants: caught ${r.mutantScore.caught}/${r.mutantScore.total}`,
    '',
    '| mutant | what is broken | caught by | evidence | result |',
    '|---|---|---|---|---|',
  );
  for (const m of r.mutants) {
    const last = m.attempts[m.attempts.length - 1];
    const by = m.caughtBy
      ? `${m.caughtBy.nemesis} → ${m.caughtBy.checkers.join(', ')}`
      : `not caught (${m.attempts.map((a) => a.nemesis).join(', ')})`;
    lines.push(`| ${m.name} | ${m.description} | ${by} | ${(last?.examples[0] ?? '—').replace(/\|/g, '\\|')} | ${badge(m.caught)} |`);
  }
  if (r.verdict.failures.length || r.verdict.warnings.length) {
    lines.push('', '## Failures and warnings', '');
    for (const f of r.verdict.failures) lines.push(`- ❌ ${f}`);
    for (const w of r.verdict.warnings) lines.push(`- ⚠ ${w}`);
  }
  const examples = r.nemeses.filter((n) => n.examples.length);
  if (examples.length) {
    lines.push('', '## Examples of violations', '');
    for (const n of examples) for (const e of n.examples.slice(0, 3)) lines.push(`- ${n.nemesis}: ${e}`);
  }
  return lines.join('\n') + '\n';
}
