'use client';

import { useEffect, useState } from 'react';
import { copyText } from '../ui/copy';
import { hueStyle, shortToken, tokenHue } from './token';
import styles from './token-chip.module.css';

/**
 * A token as a colour and its short form (first and last characters, unique among `peers`). Same colour = same token, on every screen.
 * `variant`: `majority` (solid, the token a quorum holds), `other` (dashed: a different token
 * from the majority's), `plain` (no judgement).
 *
 * The chip is a button: hovering or focusing it shows the whole token, clicking copies it. Inside
 * something that is itself a control (a radio's label), pass `copy={false}`: a plain chip then.
 */
export function TokenChip({
  token,
  variant = 'plain',
  full = false,
  copy = true,
  tabbable = true,
  hue,
  peers,
  className,
}: {
  token: string;
  variant?: 'majority' | 'other' | 'plain';
  full?: boolean;
  copy?: boolean;
  /** false in long lists (the matrix): one tab stop per row, not one per token; the detail has them all. */
  tabbable?: boolean;
  /** The hue the lock gives this token among its others (lockHues); else the token's own. */
  hue?: number;
  /** The tokens shown beside this one (one lock's): the short form is unique among them (shortToken). */
  peers?: Iterable<string>;
  className?: string;
}) {
  const [copied, setCopied] = useState<boolean | null>(null);
  useEffect(() => {
    if (copied === null) return;
    const timer = setTimeout(() => setCopied(null), 1_500);
    return () => clearTimeout(timer);
  }, [copied]);
  const short = shortToken(token, peers);
  const classes = `${styles.chip} ${styles[variant]} ${full ? styles.full : ''} ${copy ? styles.copyable : ''} ${className ?? ''}`;
  const body = (
    <>
      <span className={styles.swatch} aria-hidden="true" />
      <span className={styles.text}>{full ? token : short}</span>
    </>
  );
  if (!copy) {
    return (
      <span
        className={classes}
        style={hueStyle(token, hue)}
        title={`token ${token}`}
        data-token-hue={hue ?? tokenHue(token)}
        data-token={token}
      >
        {body}
      </span>
    );
  }
  return (
    <button
      type="button"
      className={classes}
      style={hueStyle(token, hue)}
      title={`token ${token} (click to copy)`}
      aria-label={full ? `${token} (copy token)` : `${short} (copy token ${token})`}
      data-token-hue={hue ?? tokenHue(token)}
      data-token={token}
      tabIndex={tabbable ? undefined : -1}
      data-tip={copied === null ? token : copied ? 'copied' : `could not copy: ${token}`}
      data-copied={copied === null ? undefined : String(copied)}
      onClick={async (e) => {
        e.stopPropagation();
        setCopied(await copyText(token, 'token'));
      }}
      onDoubleClick={(e) => e.stopPropagation()}
    >
      {body}
    </button>
  );
}
