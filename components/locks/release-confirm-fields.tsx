'use client';

import { useId, type ReactNode } from 'react';
import styles from './force-release-dialog.module.css';

/** A reason short enough to be no reason is refused: at least this many characters, trimmed. */
const MIN_REASON = 3;

export function reasonIsOk(reason: string): boolean {
  return reason.trim().length >= MIN_REASON;
}

/**
 * The two fields every force-release asks for before it runs (components/locks/force-release-dialog.tsx,
 * one lock; bulk-release-dialog.tsx, several): step 2, the reason that goes to the audit log, and
 * step 3, what the operator types to confirm. The dialog owns the values and says when the typed
 * confirmation matches (`typedOk`): a resource name must match exactly, a count may be padded.
 */
export function ReleaseConfirmFields({
  reason,
  onReasonChange,
  reasonGoesTo,
  placeholder,
  showCount = false,
  prompt,
  expects,
  typed,
  onTypedChange,
  typedOk,
  disabled,
}: {
  reason: string;
  onReasonChange: (reason: string) => void;
  /** Where the reason ends up, after "required, goes to". */
  reasonGoesTo: string;
  placeholder: string;
  /** A characters-used hint under the reason. */
  showCount?: boolean;
  /** What to type, after "3 · ". */
  prompt: ReactNode;
  /** A count (numeric keyboard) or a name (no spell checking). */
  expects: 'count' | 'name';
  typed: string;
  onTypedChange: (typed: string) => void;
  typedOk: boolean;
  disabled: boolean;
}) {
  const reasonId = useId();
  const confirmId = useId();
  const hintId = `${reasonId}-hint`;
  return (
    <>
      <label className={styles.field} htmlFor={reasonId}>
        <span>
          2 · Reason <em>(required, goes to {reasonGoesTo})</em>
        </span>
        <textarea
          id={reasonId}
          value={reason}
          onChange={(e) => onReasonChange(e.target.value)}
          rows={2}
          maxLength={500}
          required
          placeholder={placeholder}
          disabled={disabled}
          aria-describedby={showCount ? hintId : undefined}
        />
        {showCount && (
          <small id={hintId} className={reason.length > 0 && !reasonIsOk(reason) ? styles.hintBad : styles.hint}>
            {reason.trim().length}/500 · at least {MIN_REASON} characters
          </small>
        )}
      </label>
      <label className={styles.field} htmlFor={confirmId}>
        <span>3 · {prompt}</span>
        <input
          id={confirmId}
          type="text"
          inputMode={expects === 'count' ? 'numeric' : undefined}
          value={typed}
          onChange={(e) => onTypedChange(e.target.value)}
          autoComplete="off"
          spellCheck={expects === 'name' ? false : undefined}
          className={typed.length > 0 && !typedOk ? styles.inputBad : typedOk ? styles.inputOk : ''}
          disabled={disabled}
          aria-invalid={typed.length > 0 && !typedOk}
        />
      </label>
    </>
  );
}
