import type { MachineInfo } from './machine';
import { round, type Figure } from './stats';

/** One measured figure: min / median / max over the runs. */
export interface Row {
  name: string;
  unit: string;
  figure: Figure;
  /** Hung calls, errors, etc. */
  note?: string;
}

export interface Section {
  title: string;
  rows: Row[];
}

export type Verdict = 'met' | 'met at the median' | 'not met';

export interface TargetCheck {
  workload: string;
  goal: string;
  /** The figure the goal is judged on (median, with min–max). */
  measured: string;
  verdict: Verdict;
}

export interface WorkloadResult {
  id: string;
  title: string;
  /** How it was measured, in one or two sentences. */
  method: string;
  sections: Section[];
  targets: TargetCheck[];
  notes: string[];
  /** Raw material kept in results.json only (e.g. an RSS trace). */
  details?: Record<string, unknown>;
}

export interface BenchResults {
  startedAt: string;
  durationS: number;
  options: { quick: boolean; runs: number; only: string[] | null };
  machine: MachineInfo;
  workloads: WorkloadResult[];
}

export function row(name: string, unit: string, figure: Figure, note?: string): Row {
  return note === undefined ? { name, unit, figure } : { name, unit, figure, note };
}

function fmt(value: number): string {
  if (Number.isNaN(value)) return '—';
  return String(round(value));
}

/** "12.3 [11.0–14.1]": median, then min–max. */
export function describeFigure(fig: Figure, unit: string): string {
  return `${fmt(fig.median)}${unit === '×' ? '×' : ` ${unit}`} [${fmt(fig.min)}–${fmt(fig.max)}]`;
}

/** At least `goal` in every run: met; at the median only: met at the median; else not met. */
export function atLeast(workload: string, goal: string, fig: Figure, limit: number, unit: string): TargetCheck {
  const verdict: Verdict = fig.min >= limit ? 'met' : fig.median >= limit ? 'met at the median' : 'not met';
  return { workload, goal, measured: describeFigure(fig, unit), verdict };
}

/** At most `limit` in every run: met; at the median only: met at the median; else not met. */
export function atMost(workload: string, goal: string, fig: Figure, limit: number, unit: string): TargetCheck {
  const verdict: Verdict = fig.max <= limit ? 'met' : fig.median <= limit ? 'met at the median' : 'not met';
  return { workload, goal, measured: describeFigure(fig, unit), verdict };
}

function table(header: string[], rows: string[][], align: ('l' | 'r')[]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (align[i] === 'r' ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)];
}

function machineLine(m: MachineInfo): string {
  const end = m.loadAtEnd ? m.loadAtEnd.join(' / ') : '—';
  return (
    `${m.cores} cores (${m.cpuModel}), ${m.memoryGb} GB, ${m.os}; Node ${m.node}, ioredis ${m.ioredis}, Redis ${m.redis}; ` +
    `load average (1/5/15 min) at start ${m.loadAtStart.join(' / ')}, at end ${end}${m.commit ? `; code ${m.commit}` : ''}`
  );
}

/** The console table. */
export function renderText(results: BenchResults): string {
  const out: string[] = [];
  out.push(`Machine: ${machineLine(results.machine)}`);
  out.push(
    `Runs: ${results.options.runs} per figure after a warm-up${results.options.quick ? ' (--quick)' : ''}; ` +
      `figures are min / median / max over the runs; ratios are computed run by run. Took ${results.durationS} s.`,
  );
  for (const w of results.workloads) {
    out.push('', `== ${w.title}`, `   ${w.method}`);
    for (const s of w.sections) {
      out.push('', `   ${s.title}`);
      const rows = s.rows.map((r) => [r.name, r.unit, fmt(r.figure.min), fmt(r.figure.median), fmt(r.figure.max), r.note ?? '']);
      for (const l of table(['', 'unit', 'min', 'median', 'max', ''], rows, ['l', 'l', 'r', 'r', 'r', 'l'])) out.push(`   ${l}`);
    }
    for (const n of w.notes) out.push(`   note: ${n}`);
  }
  const targets = results.workloads.flatMap((w) => w.targets);
  if (targets.length > 0) {
    out.push('', '== Targets (judged on every run; "met at the median" when only the median meets it)');
    for (const l of table(
      ['workload', 'goal', 'measured: median [min–max]', 'verdict'],
      targets.map((t) => [t.workload, t.goal, t.measured, t.verdict]),
      ['l', 'l', 'l', 'l'],
    ))
      out.push(`   ${l}`);
  }
  return out.join('\n');
}

/** The same as Markdown tables (for docs/benchmarks.md). */
export function renderMarkdown(results: BenchResults): string {
  const out: string[] = [];
  out.push(`Machine: ${machineLine(results.machine)}.`, '');
  out.push(
    `${results.options.runs} runs per figure after a warm-up${results.options.quick ? ' (--quick)' : ''}; min / median / max over the runs; ` +
      `ratios computed run by run. Run started ${results.startedAt}, took ${results.durationS} s.`,
  );
  for (const w of results.workloads) {
    out.push('', `### ${w.title}`, '', w.method, '');
    for (const s of w.sections) {
      out.push(`**${s.title}**`, '', '| | unit | min | median | max | |', '|---|---|--:|--:|--:|---|');
      for (const r of s.rows)
        out.push(`| ${r.name} | ${r.unit} | ${fmt(r.figure.min)} | ${fmt(r.figure.median)} | ${fmt(r.figure.max)} | ${r.note ?? ''} |`);
      out.push('');
    }
    for (const n of w.notes) out.push(`- ${n}`);
  }
  const targets = results.workloads.flatMap((w) => w.targets);
  out.push('', '### Targets', '', '| workload | goal | measured: median [min–max] | verdict |', '|---|---|---|---|');
  for (const t of targets) out.push(`| ${t.workload} | ${t.goal} | ${t.measured} | ${t.verdict} |`);
  return out.join('\n');
}
