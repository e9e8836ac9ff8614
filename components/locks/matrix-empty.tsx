'use client';

import Link from 'next/link';
import { formatCount } from './format';
import styles from './lock-matrix.module.css';

/** The matrix could not read the locks: say so, with a retry. */
export function MatrixError({ message, onRetry }: { message: string | undefined; onRetry: () => void }) {
  return (
    <div className={styles.empty} role="alert">
      <strong>Could not read the locks</strong>
      <span>{message}</span>
      <button type="button" className="button" onClick={onRetry}>
        Try again
      </button>
    </div>
  );
}

/** No row to show: nothing matches the filters, or no lock is held at all (and where locks come from). */
export function MatrixEmpty({
  filtering,
  pattern,
  total,
  isOperator,
  onClearFilters,
}: {
  filtering: boolean;
  pattern: string | undefined;
  total: number | null;
  isOperator: boolean;
  onClearFilters: () => void;
}) {
  return (
    <div className={styles.empty} data-testid="locks-empty">
      {filtering || pattern ? (
        <>
          <strong>No lock matches</strong>
          <span>
            {pattern ? `No key matches ${pattern}` : 'Nothing matches these filters'}
            {total !== null ? ` among ${formatCount(total)} keys.` : '.'}
          </span>
          {filtering && (
            <button type="button" className="button" onClick={onClearFilters}>
              Clear filters
            </button>
          )}
        </>
      ) : (
        <>
          <strong>No locks are held right now</strong>
          <span>Locks taken through the API{isOperator ? ' or the playground' : ''} show up here within a second.</span>
          {isOperator && (
            <Link className="button button-primary" href="/playground">
              Open the playground
            </Link>
          )}
        </>
      )}
    </div>
  );
}
