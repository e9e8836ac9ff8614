import styles from './chaos.module.css';

/** A pass / fail (or warning) pill. */
export function VerdictBadge({ passed, warn = false, label }: { passed: boolean; warn?: boolean; label?: string }) {
  const tone = !passed ? styles.fail : warn ? styles.warn : styles.pass;
  return (
    <span className={`${styles.badge} ${tone}`} data-verdict={passed ? 'pass' : 'fail'}>
      {label ?? (passed ? 'pass' : 'fail')}
    </span>
  );
}
