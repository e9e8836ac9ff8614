'use client';

import { createContext, useContext, type FormEvent, type ReactNode } from 'react';
import { useModalDialog } from '../ui/use-modal-dialog';
import styles from './force-release-dialog.module.css';

/** The release a dialog runs: react-query's mutation, as far as the frame needs it. */
export interface ReleaseRun {
  isPending: boolean;
  isError: boolean;
  error: unknown;
  mutate: () => void;
}

/** What the parts of a release dialog's body share (`useReleaseDialog`): where the release stands, and how to confirm or leave. */
export interface ReleaseDialogState {
  /** The release runs: nothing closes the dialog. */
  busy: boolean;
  canConfirm: boolean;
  /** The release's error, or null when it has not failed. */
  failed: unknown;
  /** Close the dialog; does nothing while the release runs. */
  close: () => void;
  /** The form's submit handler: starts the release only when `canConfirm`. */
  submit: (e: FormEvent) => void;
}

const ReleaseDialogContext = createContext<ReleaseDialogState | null>(null);

/** The release dialog this part is in (ReleaseForm, ReleaseDoneButton, a result's own Done). */
export function useReleaseDialog(): ReleaseDialogState {
  const state = useContext(ReleaseDialogContext);
  if (!state) throw new Error('useReleaseDialog outside a ReleaseDialogFrame');
  return state;
}

/**
 * A force-release dialog's frame (the single, the bulk and the slot dialog's): the modal
 * `<dialog>` (opened while mounted) labelled by its title, the head (the title, what
 * compare-and-delete means here, the close button), and for the body (`children`: steps, form,
 * result) the release's state, close and submit. While the release runs nothing closes it,
 * neither Escape, the close button nor Cancel: a release under way cannot be cancelled.
 */
export function ReleaseDialogFrame({
  id,
  title,
  lede,
  release,
  canConfirm,
  onClose,
  children,
}: {
  /** Names the parts: the title's id is `${id}-title`, the dialog's test id `${id}-dialog`. */
  id: string;
  title: ReactNode;
  lede: ReactNode;
  release: ReleaseRun;
  canConfirm: boolean;
  /** Called once the dialog has closed. */
  onClose: () => void;
  children: ReactNode;
}) {
  const ref = useModalDialog<HTMLDialogElement>();
  const busy = release.isPending;
  const close = () => {
    if (!busy) ref.current?.close();
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (canConfirm) release.mutate();
  };
  return (
    <dialog
      ref={ref}
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
      <ReleaseDialogContext value={{ busy, canConfirm, failed: release.isError ? release.error : null, close, submit }}>
        {children}
      </ReleaseDialogContext>
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

/** Done, once released: closes the dialog (`primary`: the button to press, focused). */
export function ReleaseDoneButton({ primary = false }: { primary?: boolean }) {
  const { close } = useReleaseDialog();
  return (
    <button type="button" className={primary ? 'button button-primary' : 'button'} onClick={close} autoFocus={primary}>
      Done
    </button>
  );
}
