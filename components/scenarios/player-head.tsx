import type { RunView } from '@/lib/api/scenarios';
import { fmtSeconds } from './format';
import { GLOSSARY, Term } from './glossary';
import styles from './scenarios.module.css';

const entry = (term: string) => GLOSSARY.find((e) => e.term === term)!;
const TTL_ENTRY = entry('TTL');
const LEASE_CEILING = entry('lease ceiling');
const QUORUM = entry('quorum');

const STATUS_LABEL: Record<RunView['status'], string> = {
  running: 'Running',
  paused: 'Paused',
  predict: 'Your prediction',
  restoring: 'Restoring the cluster',
  done: 'Finished',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

/** The run's title and status, the way back to the catalog, and its settings (seed, prefix, TTL, quorum). */
export function PlayerHead({ run, onBack }: { run: RunView; onBack: () => void }) {
  return (
    <div className={styles.playerHead}>
      <div className={styles.playerTitle}>
        <button type="button" className="button button-ghost small" onClick={onBack}>
          ← All scenarios
        </button>
        <h1 className={styles.title}>
          <span className={styles.number}>{run.number}</span>
          {run.title}
        </h1>
        <span className={`${styles.status} ${styles[`status-${run.status}`]}`} data-testid="run-status">
          {STATUS_LABEL[run.status]}
        </span>
      </div>
      <div className={styles.meta}>
        <span>
          seed <code>{run.seed}</code>
        </span>
        <span>
          prefix <code>{run.prefix}</code>
        </span>
        <span>
          <Term entry={TTL_ENTRY}>TTL</Term> {fmtSeconds(run.ttlMs)} · <Term entry={LEASE_CEILING}>lease ceiling</Term>{' '}
          {fmtSeconds(run.maxTtlMs)} · <Term entry={QUORUM}>quorum</Term> {run.quorum} of {run.nodes.length}
        </span>
        <span>started by {run.startedBy}</span>
      </div>
    </div>
  );
}
