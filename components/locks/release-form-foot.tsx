import { ReleaseErrorCallout } from './release-error';
import styles from './force-release-dialog.module.css';

/**
 * A force-release form's foot (the single, the bulk and the slot dialog's): why the release failed
 * when it did, Cancel, and the confirm button, a danger that reads "Releasing…" while the release
 * runs. Both buttons wait while it runs: a release under way cannot be cancelled.
 */
export function ReleaseFormFoot({
  failed,
  busy,
  canConfirm,
  onCancel,
  confirmLabel,
  confirmTestId,
}: {
  /** The release's error, or null when it has not failed. */
  failed: unknown;
  busy: boolean;
  canConfirm: boolean;
  onCancel: () => void;
  confirmLabel: string;
  confirmTestId: string;
}) {
  return (
    <>
      {failed !== null && <ReleaseErrorCallout error={failed} />}
      <div className="dialog-actions">
        <button type="button" className="button" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
        <button type="submit" className={`button ${styles.danger}`} disabled={!canConfirm} data-testid={confirmTestId}>
          {busy ? 'Releasing…' : confirmLabel}
        </button>
      </div>
    </>
  );
}
