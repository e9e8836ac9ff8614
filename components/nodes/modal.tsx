'use client';

import { useId, type ReactNode } from 'react';
import { useModalDialog } from '../ui/use-modal-dialog';
import styles from './nodes.module.css';

/**
 * A modal on the native <dialog>: focus is trapped by the browser and given back to the opener on close, Esc closes it, and
 * it is named by its heading. Mounted only while open, so its content always starts fresh.
 */
export function Modal({
  title,
  onClose,
  children,
  footer,
  wide,
  testId,
  tone,
}: {
  title: ReactNode;
  onClose: () => void;
  children: ReactNode;
  footer?: ReactNode;
  wide?: boolean;
  testId?: string;
  tone?: 'bad' | 'warn' | 'ok';
}) {
  const ref = useModalDialog<HTMLDialogElement>();
  const headingId = useId();
  return (
    <dialog
      ref={ref}
      className={`dialog ${styles.modal}${wide ? ` ${styles.modalWide}` : ''}${tone ? ` ${styles[`modal-${tone}`]}` : ''}`}
      aria-labelledby={headingId}
      data-testid={testId}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
    >
      <div className={styles.modalHead}>
        <h2 id={headingId}>{title}</h2>
        <button type="button" className={`button button-ghost ${styles.modalClose}`} aria-label="Close" onClick={onClose}>
          ×
        </button>
      </div>
      <div className={styles.modalBody}>{children}</div>
      {footer ? <div className="dialog-actions">{footer}</div> : null}
    </dialog>
  );
}
