'use client';

import type { LockListPage } from '@/lib/client/queries';
import { MatrixEmpty, MatrixError } from './matrix-empty';
import type { useMatrixOptions } from './matrix-options';
import { MatrixSkeleton } from './matrix-skeleton';

/** What the matrix shows beside its (empty) table: a skeleton while loading, the read's error, or why there are no rows. */
export function MatrixPlaceholder({
  loadState,
  empty,
  nodes,
  error,
  onRetry,
  options,
  filtering,
  isOperator,
  latest,
}: {
  loadState: 'loading' | 'error' | 'ready';
  /** Read, and no row in it (nor a page or a scan left to bring one). */
  empty: boolean;
  nodes: number;
  error: string | undefined;
  onRetry: () => void;
  options: ReturnType<typeof useMatrixOptions>;
  filtering: boolean;
  isOperator: boolean;
  latest: LockListPage | undefined;
}) {
  const clearFilters = () => {
    options.setSearch('');
    options.setPrefix('');
    options.setStates([]);
  };
  return (
    <>
      {loadState === 'loading' && <MatrixSkeleton nodes={nodes} />}
      {loadState === 'error' && <MatrixError message={error} onRetry={onRetry} />}
      {loadState === 'ready' && empty && (
        <MatrixEmpty
          filtering={filtering}
          pattern={options.filters.pattern}
          total={latest?.total ?? null}
          isOperator={isOperator}
          onClearFilters={clearFilters}
          latest={latest}
        />
      )}
    </>
  );
}
