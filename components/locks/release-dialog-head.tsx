import type { ReactNode } from 'react';
import styles from './force-release-dialog.module.css';

/** A force-release dialog's head: its title (the dialog's label), what compare-and-delete means here, and the close button. */
export function ReleaseDialogHead({
  titleId,
  title,
  lede,
  onClose,
  busy,
}: {
  titleId: string;
  title: ReactNode;
  lede: ReactNode;
  onClose: () => void;
  /** A release under way: the dialog cannot be closed. */
  busy: boolean;
}) {
  return (
    <div className={styles.head}>
      <div>
        <h2 id={titleId}>{title}</h2>
        <p className={styles.lede}>{lede}</p>
      </div>
      <button type="button" className="button button-ghost" aria-label="Close" onClick={onClose} disabled={busy}>
        ✕
      </button>
    </div>
  );
}
