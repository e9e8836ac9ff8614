import type { UseQueryResult } from '@tanstack/react-query';
import Link from 'next/link';
import type { ForceReleaseResponse } from '@/lib/api/locks';
import { HolderPulse } from './holder-pulse';
import { NodeOutcomes } from './node-outcomes';
import { ReleaseDoneButton } from './release-dialog-frame';
import { DryRunHead } from './release-error';
import styles from './force-release-dialog.module.css';

/** Where the force-release stands: Preview, Reason, Confirm, Result (the current step marked for assistive tech). */
export function ReleaseSteps({ step }: { step: number }) {
  return (
    <ol className={styles.steps} aria-label="Steps">
      {['Preview', 'Reason', 'Confirm', 'Result'].map((label, i) => {
        const state = i < step ? 'done' : i === step ? 'current' : 'todo';
        return (
          <li key={label} className={`${styles.step} ${styles[`step-${state}`]}`} aria-current={state === 'current' ? 'step' : undefined}>
            <span className={styles.stepNum}>{state === 'done' ? '✓' : i + 1}</span>
            {label}
          </li>
        );
      })}
    </ol>
  );
}

/** Step 1: the dry run node by node, the holder's liveness when it would be hit, and the verdict in one line. */
export function ForceReleasePreview({
  preview,
  wouldDelete,
  labels,
  token,
  liveConfirmed,
  onLiveConfirm,
  busy,
}: {
  preview: UseQueryResult<ForceReleaseResponse>;
  wouldDelete: number;
  labels: Map<number, string>;
  token: string;
  liveConfirmed: boolean;
  onLiveConfirm: (confirmed: boolean) => void;
  busy: boolean;
}) {
  return (
    <section
      aria-labelledby="preview-title"
      className={styles.preview}
      data-testid="force-release-preview"
      data-loading-state={preview.isFetching ? 'loading' : preview.isError ? 'error' : 'ready'}
    >
      <DryRunHead titleId="preview-title" title="1 · Dry run: what each node will do" preview={preview} busy={busy} />
      {!preview.isError && <NodeOutcomes nodes={preview.data?.nodes ?? null} labels={labels} token={token} />}
      {preview.data?.liveness && wouldDelete > 0 && (
        <HolderPulse liveness={preview.data.liveness} confirmed={liveConfirmed} onConfirm={onLiveConfirm} disabled={busy} />
      )}
      {preview.data && (
        <p className={`${styles.verdict} ${wouldDelete === 0 ? styles.verdictWarn : ''}`} data-testid="force-release-verdict">
          {wouldDelete === 0
            ? 'Nothing to release with this token: it expired or changed hands since you looked.'
            : `Will delete the key on ${wouldDelete} of ${preview.data.nodes.length} nodes.`}
          {preview.data.nodes.some((n) => n.outcome === 'other-holder') ? ' Nodes holding another token keep it.' : ''}
        </p>
      )}
    </section>
  );
}

/** Step 4: what was deleted where, the audit entry, and the ways out. */
export function ForceReleaseResult({
  result,
  labels,
  token,
}: {
  result: ForceReleaseResponse;
  labels: Map<number, string>;
  token: string;
}) {
  return (
    <div className={styles.body} data-testid="force-release-result">
      <p className={`${styles.resultBanner} ${result.deleted > 0 ? styles.resultOk : styles.resultWarn}`} role="status">
        <strong>{result.deleted > 0 ? `Deleted on ${result.deleted} of ${result.nodes.length} nodes.` : 'Nothing was deleted.'}</strong>
        {result.auditId && (
          <span>
            {' '}
            Audit entry <code data-testid="force-release-audit-id">{result.auditId}</code> ·{' '}
            <Link href="/audit?action=lock.force-release">open the audit log</Link>
          </span>
        )}
      </p>
      <NodeOutcomes nodes={result.nodes} labels={labels} token={token} showAfter />
      <div className="dialog-actions">
        <Link className="button" href="/locks">
          Back to the matrix
        </Link>
        <ReleaseDoneButton primary />
      </div>
    </div>
  );
}
