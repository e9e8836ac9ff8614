'use client';

import type { FormEvent, ReactNode, RefObject } from 'react';
import { useModalDialog } from '../ui/use-modal-dialog';
import styles from './force-release-dialog.module.css';

/** A force-release dialog's element (for `ReleaseDialogFrame`) and the two handlers its body uses. */
export interface ReleaseDialog {
  ref: RefObject<HTMLDialogElement | null>;
  /** Close the dialog; does nothing while the release runs. */
  close: () => void;
  /** The form's submit handler: confirms only when `canConfirm`. */
  submit: (e: FormEvent) => void;
}

/**
 * A force-release dialog (the single, the bulk and the slot dialog's), opened as a modal while
 * mounted. While the release runs (`busy`) nothing closes it, neither Escape, the close button nor
 * Cancel: a release under way cannot be cancelled.
 */
export function useReleaseDialog({
  busy,
  canConfirm,
  onConfirm,
}: {
  busy: boolean;
  canConfirm: boolean;
  onConfirm: () => void;
}): ReleaseDialog {
  const ref = useModalDialog<HTMLDialogElement>();
  return {
    ref,
    close: () => {
      if (!busy) ref.current?.close();
    },
    submit: (e: FormEvent) => {
      e.preventDefault();
      if (canConfirm) onConfirm();
    },
  };
}

/**
 * A force-release dialog's frame: the modal `<dialog>` labelled by its title, and the head (the
 * title, what compare-and-delete means here, the close button). The body (steps, form, result)
 * is the dialog's own: `children`. `dialogRef`, `busy` and `close` are `useReleaseDialog`'s.
 */
export function ReleaseDialogFrame({
  dialogRef,
  busy,
  close,
  id,
  title,
  lede,
  onClose,
  children,
}: {
  dialogRef: ReleaseDialog['ref'];
  busy: boolean;
  close: () => void;
  /** Names the parts: the title's id is `${id}-title`, the dialog's test id `${id}-dialog`. */
  id: string;
  title: ReactNode;
  lede: ReactNode;
  /** Called once the dialog has closed. */
  onClose: () => void;
  children: ReactNode;
}) {
  return (
    <dialog
      ref={dialogRef}
      className={`dialog ${styles.dialog}`}
      aria-labelledby={`${id}-title`}
      data-testid={`${id}-dialog`}
      onClose={onClose}
      onCancel={(e) => {
        if (busy) e.preventDefault();
      }}
    >
      <div className={styles.head}>
        <div>
          <h2 id={`${id}-title`}>{title}</h2>
          <p className={styles.lede}>{lede}</p>
        </div>
        <button type="button" className="button button-ghost" aria-label="Close" onClick={close} disabled={busy}>
          ✕
        </button>
      </div>
      {children}
    </dialog>
  );
}

/** The title of one resource's release: "Force-release" and its name, "Force-release done" once released. */
export function ResourceReleaseTitle({ resource, done }: { resource: string; done: boolean }) {
  return (
    <>
      {done ? 'Force-release done' : 'Force-release'} <code className={styles.resource}>{resource}</code>
    </>
  );
}
