import type { NemesisReport } from '@/lib/api/chaos-report';
import styles from './chaos.module.css';
import { count, errorLabel, ms } from './format';
import { VerdictBadge } from './verdict-badge';

/** A figure that must stay 0 in a safe configuration: muted when it is, loud when it is not. */
function Violation({ value, label }: { value: number; label: string }) {
  return (
    <td className={`${styles.num} ${value === 0 ? styles.zero : styles.hot}`} data-label={label}>
      {count(value)}
    </td>
  );
}

/** One row per nemesis: what the real core did under it. */
export function NemesisTable({ rows, target }: { rows: readonly NemesisReport[]; target: number }) {
  return (
    <div className={styles.tableWrap} role="region" aria-label="Nemeses" tabIndex={0}>
      <table className={`${styles.table} ${styles.fitTable}`} data-testid="chaos-nemeses">
        <thead>
          <tr>
            <th scope="col">Nemesis</th>
            <th scope="col" className={styles.num}>
              Acquisitions
            </th>
            <th scope="col">Failures by class</th>
            <th scope="col" className={styles.num}>
              Overlaps
            </th>
            <th scope="col" className={styles.num}>
              Fence violations
            </th>
            <th scope="col" className={styles.num} title="accepted writes of an older holder after a newer holder's, fenced register">
              Stale writes fenced
            </th>
            <th scope="col" className={styles.num} title="the same on the unfenced register: what fencing prevents">
              Stale writes unfenced
            </th>
            <th scope="col" className={styles.num}>
              Refused by fence
            </th>
            <th scope="col" className={styles.num}>
              Leaked keys
            </th>
            <th scope="col" className={styles.num}>
              Foreign deletes
            </th>
            <th scope="col" className={styles.num}>
              Expired grants
            </th>
            <th scope="col" className={styles.num} title="extends accepted although made after the validity they extended had ended">
              Late extends
            </th>
            <th
              scope="col"
              className={styles.num}
              title="keys a rejected acquire or a released lock left on a node that answered it, read while they would still be live"
            >
              Leftovers
            </th>
            <th scope="col" className={styles.num}>
              Acquire p50 / p99 ms
            </th>
            <th scope="col" className={styles.num}>
              Commands / acquisition
            </th>
            <th scope="col">Result</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((n) => {
            const classes = Object.entries(n.failuresByClass).sort((a, b) => b[1] - a[1]);
            return (
              <tr key={n.nemesis} data-nemesis={n.nemesis}>
                <th scope="row">
                  {n.nemesis} <span className={styles.path}>{n.network}</span>
                  <span className={styles.sub}>{n.title}</span>
                  <span className={styles.sub}>
                    {n.cycles} fault cycles, {ms(n.durationMs / 1000, 1)} s
                  </span>
                  {n.targeted ? (
                    <span
                      className={`${styles.sub} ${n.targeted.defended < n.targeted.trials ? styles.hot : ''}`}
                      title={n.targeted.expectation}
                    >
                      targeted: danger in place in {n.targeted.armed} of {n.targeted.trials} trials, defence seen in {n.targeted.defended}
                    </span>
                  ) : null}
                </th>
                <td className={styles.num} data-label="Acquisitions">
                  {count(n.successes)}
                  <span className={styles.sub}>{count(n.successesUnderFault)} under fault</span>
                  {n.shortfall ? <span className={`${styles.sub} ${styles.warning}`}>short of {count(target)}</span> : null}
                  {n.liveness ? (
                    <span
                      className={`${styles.sub} ${n.liveness.passed ? '' : styles.hot}`}
                      title="a quorum stayed reachable: no acquire may fail for unavailability, and throughput may not collapse"
                    >
                      liveness {n.liveness.passed ? 'ok' : 'FAILED'}: {count(n.liveness.unavailable)} unavailable,{' '}
                      {count(Math.round(n.liveness.ratePerS))}/s
                    </span>
                  ) : null}
                </td>
                <td data-label="Failures by class">
                  {classes.length === 0 ? (
                    <span className={styles.zero}>—</span>
                  ) : (
                    <span className={styles.classes}>
                      {classes.map(([name, c]) => (
                        <span key={name} className={styles.classChip}>
                          {errorLabel(name)} {count(c)}
                        </span>
                      ))}
                    </span>
                  )}
                </td>
                <Violation value={n.overlaps} label="Overlaps" />
                <Violation value={n.fenceViolations} label="Fence violations" />
                <Violation value={n.staleAcceptedFenced} label="Stale writes fenced" />
                <td
                  className={`${styles.num} ${n.staleAcceptedUnfenced > 0 ? styles.expected : styles.zero}`}
                  data-label="Stale writes unfenced"
                >
                  {count(n.staleAcceptedUnfenced)}
                </td>
                <td className={`${styles.num} ${n.rejectedFenced > 0 ? '' : styles.zero}`} data-label="Refused by fence">
                  {count(n.rejectedFenced)}
                </td>
                <Violation value={n.leakedKeys} label="Leaked keys" />
                <Violation value={n.foreignDeletes} label="Foreign deletes" />
                <Violation value={n.expiredGrants} label="Expired grants" />
                <Violation value={n.lateExtends} label="Late extends" />
                <Violation value={n.leftovers} label="Leftovers" />
                <td className={styles.num} data-label="Acquire p50 / p99 ms">
                  {ms(n.p50Ms)} / {ms(n.p99Ms)}
                </td>
                <td className={styles.num} data-label="Commands / acquisition">
                  {n.costApproximate ? '≥ ' : ''}
                  {ms(n.commandsPerAcquisition)}
                  <span className={styles.sub}>{ms(n.scriptCallsPerAcquisition)} script calls</span>
                </td>
                <td data-label="Result">
                  <VerdictBadge passed={n.passed} warn={n.shortfall} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
