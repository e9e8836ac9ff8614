import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { ApiError } from '@/lib/client/fetch-json';
import styles from './force-release-dialog.module.css';

/** A force-release's failure in words (single or bulk, preview or release): a 403 says who may; others say what the API said. */
function releaseErrorText(err: unknown): string {
  if (err instanceof ApiError && err.status === 403) return 'Only operators can force-release locks.';
  return err instanceof Error ? err.message : String(err);
}

/** Why a force-release, or its dry run, failed: an alert in the dialog. */
export function ReleaseErrorCallout({ error }: { error: unknown }) {
  return (
    <p className="callout callout-bad" role="alert">
      {releaseErrorText(error)}
    </p>
  );
}

/**
 * A force-release dry run's head (the single and the bulk dialog's): its title, "Check again" to
 * ask the nodes anew (not while they are asked, nor while the release runs: `busy`; left out once
 * released: `recheck` false), and, when the dry run failed, why. The dialog shows its outcomes
 * below only when it did not fail.
 */
export function DryRunHead({
  titleId,
  title,
  preview,
  recheck = true,
  busy = false,
}: {
  titleId: string;
  title: ReactNode;
  preview: UseQueryResult<unknown>;
  recheck?: boolean;
  busy?: boolean;
}) {
  return (
    <>
      <div className={styles.previewHead}>
        <h3 id={titleId}>{title}</h3>
        {recheck && (
          <button
            type="button"
            className="button button-ghost small"
            onClick={() => void preview.refetch()}
            disabled={preview.isFetching || busy}
          >
            {preview.isFetching ? 'Checking…' : 'Check again'}
          </button>
        )}
      </div>
      {preview.isError && <ReleaseErrorCallout error={preview.error} />}
    </>
  );
}
