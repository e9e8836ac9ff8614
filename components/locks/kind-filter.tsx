'use client';

import { useSearchParams } from 'next/navigation';
import { useCallback, useState } from 'react';
import { KIND_LABEL, LOCK_KINDS, type LockKind } from './slot-queries';
import controls from './lock-list-controls.module.css';

/** `all` or one kind: the Locks screen's `?kind=` (unknown values read as `all`). */
export type KindChoice = LockKind | 'all';

const PLURAL: Record<LockKind, string> = { mutex: 'Mutexes', semaphore: 'Semaphores', rwlock: 'RW locks' };

/** The kind shown, kept in the address (`?kind=`) beside the matrix's own filters, so a view can be shared. */
export function useKindChoice(): [KindChoice, (kind: KindChoice) => void] {
  const params = useSearchParams();
  const [kind, setKind] = useState<KindChoice>(() => {
    const asked = params.get('kind');
    return (LOCK_KINDS as readonly string[]).includes(asked ?? '') ? (asked as LockKind) : 'all';
  });
  const choose = useCallback((next: KindChoice) => {
    const q = new URLSearchParams(window.location.search);
    if (next === 'all') q.delete('kind');
    else q.set('kind', next);
    window.history.replaceState(null, '', q.size ? `?${q}` : window.location.pathname);
    setKind(next);
  }, []);
  return [kind, choose];
}

/** The kind filter: every kind, or mutexes, semaphores or read-write locks alone; counts where known. */
export function KindFilter({
  kind,
  onKind,
  counts,
}: {
  kind: KindChoice;
  onKind: (kind: KindChoice) => void;
  counts: Partial<Record<LockKind, number>> | null;
}) {
  const choices: KindChoice[] = ['all', ...LOCK_KINDS];
  return (
    <div className={controls.kindTabs} role="group" aria-label="Filter by kind" data-testid="kind-filter">
      {choices.map((choice) => {
        const count = choice === 'all' ? undefined : counts?.[choice];
        return (
          <button
            key={choice}
            type="button"
            className={`${controls.kindTab} ${kind === choice ? controls.kindTabActive : ''}`}
            aria-pressed={kind === choice}
            data-kind={choice}
            onClick={() => onKind(choice)}
            title={choice === 'all' ? 'Every kind of lock' : `${KIND_LABEL[choice]}s only`}
          >
            {choice === 'all' ? 'All kinds' : PLURAL[choice]}
            {count !== undefined ? <span className={controls.kindCount}>{count}</span> : null}
          </button>
        );
      })}
    </div>
  );
}
