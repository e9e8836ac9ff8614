'use client';

import type { LockListPage } from '@/lib/client/queries';
import { ReadAt } from './matrix-status';
import controls from './lock-list-controls.module.css';

/** The Locks title row: what the matrix is, and when it was read (with a refresh). */
export function LocksTitle({ latest, now, onRefresh }: { latest: LockListPage | undefined; now: number | null; onRefresh: () => void }) {
  return (
    <div className={controls.titleRow}>
      <div>
        <h1 id="locks-title" className={controls.title}>
          Locks
        </h1>
        <p className={controls.subtitle}>
          The quorum matrix: every resource against every master. Same colour, same token; a row is only a lock when a quorum agrees.
        </p>
      </div>
      <ReadAt latest={latest} now={now} onRefresh={onRefresh} />
    </div>
  );
}
