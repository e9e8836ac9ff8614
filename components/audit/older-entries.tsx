import { LIMITS } from './audit-filters';
import styles from './audit.module.css';

/**
 * "Limit reached": the older entries exist but are not shown. Offers the next larger page (up to
 * the largest the API serves), or says that the rest is only reachable by narrowing the filters.
 */
export function OlderEntries({
  limit,
  onMore,
  limits = LIMITS,
}: {
  limit: number;
  onMore: (next: number) => void;
  limits?: readonly number[];
}) {
  const next = limits.find((l) => l > limit);
  return (
    <span className={styles.warnText}>
      {' '}
      · limit reached, older ones not shown
      {next ? (
        <>
          {' · '}
          <button
            type="button"
            className={`button button-ghost ${styles.moreButton}`}
            onClick={() => onMore(next)}
            data-testid="show-older"
          >
            Show up to {next.toLocaleString()}
          </button>
        </>
      ) : (
        ' · narrow the filters to reach them'
      )}
    </span>
  );
}
