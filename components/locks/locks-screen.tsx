'use client';

import { useQuery } from '@tanstack/react-query';
import { useCallback, useState } from 'react';
import { KindFilter, useKindChoice } from './kind-filter';
import { LockMatrix } from './lock-matrix';
import { SlotLockList } from './slot-lock-list';
import { slotLocksQuery } from './slot-queries';
import controls from './lock-list-controls.module.css';

/**
 * The Locks screen: the mutexes' quorum matrix, and the semaphores and read-write locks, filtered by
 * kind (`?kind=mutex|semaphore|rwlock`, every kind by default: the matrix first, then the others).
 */
export function LocksScreen() {
  const [kind, setKind] = useKindChoice();
  // With the matrix shown, the semaphores and read-write locks are read once its first page has
  // answered: their scans must not delay the matrix's first rows.
  const [matrixSettled, setMatrixSettled] = useState(false);
  const onSettled = useCallback(() => setMatrixSettled(true), []);
  const slotsOn = matrixSettled || kind === 'semaphore' || kind === 'rwlock';
  // The counts on the filter: the same shared read as the list below.
  const { data } = useQuery({ ...slotLocksQuery(null, ''), enabled: slotsOn });
  const filter = <KindFilter kind={kind} onKind={setKind} counts={data ? data.counts : null} />;
  if (kind === 'semaphore' || kind === 'rwlock') {
    return (
      <div className={`${controls.screen} page-wide`} data-testid="locks-by-kind" data-kind={kind}>
        <SlotLockList kind={kind} heading="h1" filter={filter} />
      </div>
    );
  }
  return (
    // page-wide on this outer box: the page widens only for a direct child that says so (globals.css).
    <div className={`${controls.screen} page-wide`} data-testid="locks-by-kind" data-kind={kind}>
      <LockMatrix kindFilter={filter} onSettled={onSettled} />
      {kind === 'all' && slotsOn && (
        <div className="page-wide">
          <SlotLockList kind={null} heading="h2" />
        </div>
      )}
    </div>
  );
}
