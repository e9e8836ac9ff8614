import { hueStyle, shortToken, tokenHue } from './token';
import styles from './token-chip.module.css';

/**
 * A token as a colour and its first characters. Same colour = same token, on every screen.
 * `variant`: `majority` (solid, the token a quorum holds), `other` (dashed: a different token
 * from the majority's), `plain` (no judgement).
 */
export function TokenChip({
  token,
  variant = 'plain',
  full = false,
  className,
}: {
  token: string;
  variant?: 'majority' | 'other' | 'plain';
  full?: boolean;
  className?: string;
}) {
  return (
    <span
      className={`${styles.chip} ${styles[variant]} ${full ? styles.full : ''} ${className ?? ''}`}
      style={hueStyle(token)}
      title={`token ${token}`}
      data-token-hue={tokenHue(token)}
      data-token={token}
    >
      <span className={styles.swatch} aria-hidden="true" />
      <span className={styles.text}>{full ? token : shortToken(token)}</span>
    </span>
  );
}
