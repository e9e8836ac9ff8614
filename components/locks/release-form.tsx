import type { ReactNode } from 'react';
import { useReleaseDialog } from './release-dialog-frame';
import { ReleaseErrorCallout } from './release-error';
import styles from './force-release-dialog.module.css';

/**
 * A force-release dialog's form (the single, the bulk and the slot dialog's): its fields
 * (`children`), then the foot: why the release failed when it did, Cancel, and the confirm
 * button, a danger that reads "Releasing…" while the release runs. Both buttons wait while it
 * runs: a release under way cannot be cancelled. Submitting starts the release only when allowed.
 */
export function ReleaseForm({
  confirmLabel,
  confirmTestId,
  children,
}: {
  confirmLabel: string;
  confirmTestId: string;
  children: ReactNode;
}) {
  const { busy, canConfirm, failed, close, submit } = useReleaseDialog();
  return (
    <form onSubmit={submit} className={styles.body}>
      {children}
      {failed !== null && <ReleaseErrorCallout error={failed} />}
      <div className="dialog-actions">
        <button type="button" className="button" onClick={close} disabled={busy}>
          Cancel
        </button>
        <button type="submit" className={`button ${styles.danger}`} disabled={!canConfirm} data-testid={confirmTestId}>
          {busy ? 'Releasing…' : confirmLabel}
        </button>
      </div>
    </form>
  );
}
