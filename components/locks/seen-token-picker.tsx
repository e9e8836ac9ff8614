import { formatClock } from './format';
import { TokenChip } from './token-chip';
import styles from './force-release-dialog.module.css';

/** A token the operator saw on the detail screen, and the nodes it was on. */
export interface SeenToken {
  token: string;
  nodes: number[];
  majority: boolean;
}

/** The token a force-release will compare against, as seen at `seenAt`: a choice when the lock showed several (split). */
export function SeenTokenPicker({
  tokens,
  token,
  seenAt,
  onPick,
  disabled,
}: {
  tokens: SeenToken[];
  token: string;
  seenAt: number;
  onPick: (token: string) => void;
  disabled: boolean;
}) {
  const seen = tokens.find((t) => t.token === token);
  return (
    <div className={styles.tokenBox}>
      <span className={styles.boxLabel}>Token you saw {formatClock(seenAt)}</span>
      {tokens.length > 1 ? (
        <div className={styles.tokenChoices} role="radiogroup" aria-label="Token to release">
          {tokens.map((t) => (
            <label key={t.token} className={`${styles.tokenChoice} ${t.token === token ? styles.tokenChoiceOn : ''}`}>
              <input
                type="radio"
                name="token"
                value={t.token}
                checked={t.token === token}
                onChange={() => onPick(t.token)}
                disabled={disabled}
              />
              <TokenChip token={t.token} variant={t.majority ? 'majority' : 'plain'} copy={false} peers={tokens.map((x) => x.token)} />
              <span className="muted small">
                on node {t.nodes.join(', ')}
                {t.majority ? ' · majority' : ''}
              </span>
            </label>
          ))}
        </div>
      ) : (
        <div className={styles.tokenOne}>
          <TokenChip token={token} variant={seen?.majority ? 'majority' : 'plain'} full />
          <span className="muted small">on node {seen?.nodes.join(', ')}</span>
        </div>
      )}
    </div>
  );
}
