import { STATE_INFO, type LockStateName } from './lock-state';
import styles from './state-badge.module.css';

export function StateBadge({ state, large = false }: { state: LockStateName; large?: boolean }) {
  const info = STATE_INFO[state];
  return (
    <span
      className={`${styles.badge} ${styles[info.tone]} ${large ? styles.large : ''}`}
      title={info.help}
      data-testid="lock-state"
      data-state={state}
    >
      <span className={styles.dot} aria-hidden="true" />
      {info.label}
    </span>
  );
}
