import type { NodeView } from '@/lib/api/nodes';
import type { ApiError } from '@/lib/client/fetch-json';
import { sentence } from './mark-clean-sentinel';
import { quarantineWhy } from './node-state';
import styles from './nodes.module.css';

/** Done: the node votes again, with the server's warning if it had one. */
export function MarkCleanResult({ nodeId, warning }: { nodeId: number; warning: string | null }) {
  return (
    <div className={`${styles.verdictLine} ${warning ? styles.warn : styles.ok}`} role="status" data-testid="mark-clean-result">
      <span className={styles.verdictIcon} aria-hidden="true">
        {warning ? '!' : '✓'}
      </span>
      <div>
        <strong>Node {nodeId} is marked clean and votes again.</strong>
        {warning ? <>Warning from the server: {warning}</> : 'No warning: no restart or data loss within the lease ceiling.'}
      </div>
    </div>
  );
}

/** Before the mark: the node as judged (why it sits out), what marking it clean risks, and the reason for the audit log. */
export function MarkCleanForm({
  nodeId,
  judged,
  warning,
  reason,
  onReason,
}: {
  nodeId: number;
  judged: NodeView;
  warning: string | null;
  reason: string;
  onReason: (reason: string) => void;
}) {
  const why = quarantineWhy(judged);
  return (
    <>
      <p className={styles.lead} data-testid="mark-clean-judged">
        {why ? (
          <>
            <strong>{why.label}</strong> ({why.detail}).{' '}
          </>
        ) : null}
        {sentence(judged.quarantine?.message ?? 'The node has no epoch sentinel')} Marking it clean writes a fresh epoch sentinel for the
        process running now, so it votes at once instead of waiting out the quarantine; it applies only if the node still has the sentinel
        shown here.
      </p>
      <div className={`${styles.verdictLine} ${warning ? styles.bad : styles.warn}`} data-testid="mark-clean-warning">
        <span className={styles.verdictIcon} aria-hidden="true">
          !
        </span>
        <div>
          <strong>Only if you know it lost no lock that is still valid</strong>
          The quarantine exists because a node that lost its data or restarted may have voted for a lock that is still held elsewhere.
          Letting it vote early can grant that resource to a second client.
          {warning ? ` Node ${nodeId}: ${warning}.` : ''}
        </div>
      </div>
      <label className={`${styles.field} ${styles.fieldWide}`}>
        Reason (recorded in the audit log)
        <textarea
          value={reason}
          onChange={(e) => onReason(e.target.value)}
          maxLength={500}
          required
          placeholder="e.g. fresh node, never served locks"
          aria-describedby="mark-clean-hint"
        />
        <span className={styles.hint} id="mark-clean-hint">
          At least 3 characters.
        </span>
      </label>
    </>
  );
}

/** Why nothing was marked: the server found another sentinel (409), the reading moved on while open, or another failure. */
export function MarkCleanError({
  nodeId,
  changed,
  drifted,
  error,
}: {
  nodeId: number;
  changed: ApiError | null;
  drifted: boolean;
  error: Error | null;
}) {
  return changed ? (
    <p className={styles.errorText} role="alert" data-testid="mark-clean-changed">
      Not marked, nothing was written: {changed.message}.
    </p>
  ) : drifted ? (
    <p className={styles.errorText} role="alert" data-testid="mark-clean-changed">
      Node {nodeId} changed while this dialog was open (its process or epoch sentinel is not the one shown). Look again before marking it
      clean.
    </p>
  ) : error ? (
    <p className={styles.errorText} role="alert">
      Could not mark it clean: {error.message}
    </p>
  ) : null;
}
