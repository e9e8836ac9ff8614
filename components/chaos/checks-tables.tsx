import type { ControlReport, MutantReport } from '@/lib/api/chaos-report';
import styles from './chaos.module.css';
import { duration } from './format';
import { VerdictBadge } from './verdict-badge';

/** Negative controls (a violation must be found) and their safe twins (none may be). */
export function ControlsTable({ rows }: { rows: readonly ControlReport[] }) {
  return (
    <div className={styles.tableWrap} role="region" aria-label="Negative controls" tabIndex={0}>
      <table className={styles.table} data-testid="chaos-controls">
        <thead>
          <tr>
            <th scope="col">Control</th>
            <th scope="col">Expectation</th>
            <th scope="col" className={styles.num}>
              Found
            </th>
            <th scope="col">Result</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((c) => (
            <tr key={c.name}>
              <th scope="row">
                {c.name}
                <span className={styles.sub}>
                  {c.negative ? 'negative control: the checker must catch it' : 'safe twin: nothing may be found'}
                </span>
                {c.nemesis ? <span className={styles.sub}>situation of {c.nemesis}</span> : null}
              </th>
              <td>
                {c.expectation}
                {c.details[0] ? <span className={`${styles.sub} ${styles.evidence}`}>{c.details[0]}</span> : null}
              </td>
              <td className={styles.num}>
                {c.found} of {c.trials}
              </td>
              <td>
                <VerdictBadge passed={c.passed} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Deliberately broken builds of the core, and which nemesis and checker caught each. */
export function MutantsTable({ rows }: { rows: readonly MutantReport[] }) {
  return (
    <div className={styles.tableWrap} role="region" aria-label="Mutants" tabIndex={0}>
      <table className={styles.table} data-testid="chaos-mutants">
        <thead>
          <tr>
            <th scope="col">Mutant</th>
            <th scope="col">Caught by</th>
            <th scope="col">Evidence</th>
            <th scope="col">Result</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((m) => {
            const last = m.attempts[m.attempts.length - 1];
            return (
              <tr key={m.name}>
                <th scope="row">
                  {m.name}
                  <span className={styles.sub}>{m.description}</span>
                </th>
                <td>
                  {m.caughtBy ? (
                    <>
                      {m.caughtBy.nemesis} → {m.caughtBy.checkers.join(', ')}
                    </>
                  ) : (
                    <span className={styles.hot}>not caught</span>
                  )}
                  <span className={styles.sub}>
                    {m.attempts.length} attempt{m.attempts.length === 1 ? '' : 's'},{' '}
                    {duration(m.attempts.reduce((s, a) => s + a.durationMs, 0))}
                  </span>
                </td>
                <td className={styles.evidence}>{last?.examples[0] ?? '—'}</td>
                <td>
                  <VerdictBadge passed={m.caught} label={m.caught ? 'caught' : 'missed'} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
