'use client';

import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import type { ChaosReport } from '@/lib/api/chaos-report';
import { ApiError } from '@/lib/client/fetch-json';
import { chaosReportQuery } from './chaos-query';
import styles from './chaos.module.css';
import { ControlsTable, MutantsTable } from './checks-tables';
import { formatDateTime } from '../ui/format';
import { count, duration } from './format';
import { NemesisTable } from './nemesis-table';
import { ReportSections } from './report-sections';
import { VerdictBadge } from './verdict-badge';

/** The latest run of the chaos harness (npm run chaos): safety of the lock core under faults, in figures. */
export function ChaosScreen() {
  const query = useQuery(chaosReportQuery());
  const state = query.isPending ? 'loading' : query.isError ? 'error' : 'ready';
  const missing = query.error instanceof ApiError && query.error.status === 404;
  const data = query.data;

  return (
    <div className="page-wide" data-testid="chaos-report" data-loading-state={state}>
      <div className={styles.header}>
        <div>
          <h1 className={styles.title}>Chaos</h1>
          <p className={styles.subtitle}>
            Jepsen-style checks of the lock core: client processes lock, write to a fenced register and release while a nemesis breaks the
            cluster. Checkers look for two holders at once, fences out of order and stale writes, and leaked or stolen keys.
          </p>
        </div>
        {data ? (
          <div className={styles.meta}>
            <span>
              profile {data.report.profile}, seed {data.report.seed}
            </span>
            <span>
              run {formatDateTime(data.report.startedAt)} · {duration(data.report.durationMs)}
            </span>
            <span className={styles.mono}>{data.source}</span>
          </div>
        ) : null}
      </div>

      {query.isPending ? <div className={styles.empty}>Reading the latest report…</div> : null}
      {query.isError ? (
        <div className={styles.empty} role={missing ? undefined : 'alert'} data-testid="chaos-missing">
          {missing ? <p>No chaos report on this machine yet.</p> : <p>The report could not be read: {query.error.message}</p>}
          <HowToRun />
        </div>
      ) : null}
      {data?.reference ? (
        <div className={`callout ${styles.reference}`} data-testid="chaos-reference">
          <p>
            <strong>A reference report.</strong> This is {data.reference.note}.
          </p>
          <HowToRun />
        </div>
      ) : null}
      {data ? <Report report={data.report} /> : null}
    </div>
  );
}

/** How to produce this machine's report: the commands, what they take, where the report lands. */
function HowToRun() {
  return (
    <div className={styles.howTo}>
      <p>To check the lock core on this machine, with real redis-server processes and its faults:</p>
      <ol>
        <li>
          <code>npm run chaos -- --profile ci --seed 1</code> — a few minutes: every nemesis, the negative controls and the mutants (what{' '}
          <code>npm test</code> runs).
        </li>
        <li>
          <code>npm run chaos -- --profile long --seed 2</code> — 50,000 acquisitions per nemesis, for a release.
        </li>
      </ol>
      <p>
        The report is written to <code>chaos/reports/latest.json</code> (or <code>REDLOCK_CHAOS_REPORT</code>) and shows here on the next
        read.
      </p>
    </div>
  );
}

function Report({ report }: { report: ChaosReport }) {
  const violations = report.nemeses.reduce((sum, n) => sum + n.violations, 0);
  const acquisitions = report.nemeses.reduce((sum, n) => sum + n.successes, 0);
  const controlsPassed = report.controls.filter((c) => c.passed).length;
  const s = report.settings;
  return (
    <>
      <div className={styles.summary}>
        <Stat
          label="Verdict"
          value={<VerdictBadge passed={report.verdict.passed} warn={report.verdict.warnings.length > 0} />}
          note={
            report.verdict.passed
              ? 'every safe configuration clean, every control and mutant caught'
              : `${report.verdict.failures.length} failure(s)`
          }
        />
        <Stat label="Safety violations" value={count(violations)} note={`real core, ${report.nemeses.length} nemeses`} />
        <Stat label="Acquisitions" value={count(acquisitions)} note={`target ${count(s.targetPerNemesis)} per nemesis`} />
        <Stat label="Controls" value={`${controlsPassed} / ${report.controls.length}`} note="negative controls and safe twins" />
        <Stat
          label="Mutants caught"
          value={`${report.mutantScore.caught} / ${report.mutantScore.total}`}
          note="broken builds of the core"
        />
      </div>

      {report.verdict.failures.length || report.verdict.warnings.length ? (
        <ul className={styles.notes}>
          {report.verdict.failures.map((f) => (
            <li key={f} className={styles.failure}>
              {f}
            </li>
          ))}
          {report.verdict.warnings.map((w) => (
            <li key={w} className={styles.warning}>
              {w}
            </li>
          ))}
        </ul>
      ) : null}

      <ReportSections
        sections={[
          {
            id: 'nemeses',
            title: 'Per nemesis',
            count: `${report.nemeses.length} nemeses · ${count(violations)} violations`,
            note: `${s.nodes} masters, ${s.clients} client processes (${s.fencedClients} fenced), ttl ${s.ttlMs} ms, driftFactor ${s.driftFactor}`,
            body: <NemesisTable rows={report.nemeses} target={s.targetPerNemesis} />,
          },
          {
            id: 'controls',
            title: 'Negative controls',
            count: `${controlsPassed} / ${report.controls.length} as expected`,
            note: 'scenarios the checkers must catch, beside their safe twins',
            body: <ControlsTable rows={report.controls} />,
          },
          {
            id: 'mutants',
            title: 'Mutants',
            count: `${report.mutantScore.caught} / ${report.mutantScore.total} caught`,
            note: `caught ${report.mutantScore.caught} of ${report.mutantScore.total}`,
            body: <MutantsTable rows={report.mutants} />,
          },
        ]}
      />

      <p className={styles.assumptions}>
        The figures rest on bounded clock drift on the nodes (within driftFactor; the skew nemesis stays inside it) and on one clock for
        every local process. A client&apos;s own pauses are not prevented, only fenced: the unfenced stale writes are the expected price of
        going without fences. Host: {report.host.cpus} CPUs, load {report.host.loadAverage.join(' ')}, Node {report.host.node}, redis-server{' '}
        {report.host.redis}.
      </p>
    </>
  );
}

function Stat({ label, value, note }: { label: string; value: ReactNode; note: string }) {
  return (
    <div className={styles.stat}>
      <span className={styles.statLabel}>{label}</span>
      <span className={styles.statValue}>{value}</span>
      <span className={styles.statNote}>{note}</span>
    </div>
  );
}
