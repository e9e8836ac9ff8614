'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useState, type ReactNode } from 'react';
import type { SlotKind, SlotLockListResponse } from '@/lib/api/slot-locks';
import { formatClock } from './format';
import { HolderList, KindBadge, SlotNotes, heldText } from './slot-lock-summary';
import { detailHref, slotLocksQuery } from './slot-queries';
import styles from './slot-locks.module.css';

/** Nodes whose scan failed or stopped at its bound: their cells are unknown, a lock may be missing. */
function ScanNotice({ data }: { data: SlotLockListResponse }) {
  const failed = data.scans.flatMap((s) => s.nodes.filter((n) => !n.ok).map((n) => `node ${n.node} (${n.error ?? 'unreadable'})`));
  const truncated = data.scans.some((s) => s.nodes.some((n) => n.truncated));
  if (failed.length === 0 && !truncated) return null;
  return (
    <p className="callout callout-warn" role="status">
      {failed.length > 0 ? `Not read: ${[...new Set(failed)].join(', ')}. ` : ''}
      {truncated ? 'A scan stopped at its bound of keys per master: some locks are not shown.' : ''}
    </p>
  );
}

/**
 * Semaphores and read-write locks, one row each: its kind, what it holds on a quorum (`held/limit
 * permits`, `N readers`, `writer`), its holders by token, and a waiting writer or keys without a
 * quorum. The name opens the lock's slot × node matrix. `filter`: the kind filter, under the title.
 */
export function SlotLockList({ kind, heading, filter }: { kind: SlotKind | null; heading: 'h1' | 'h2'; filter?: ReactNode }) {
  const [search, setSearch] = useState('');
  const { data, error, isPending } = useQuery(slotLocksQuery(kind, search));
  const Heading = heading;
  const title = kind === 'semaphore' ? 'Semaphores' : kind === 'rwlock' ? 'Read-write locks' : 'Semaphores and read-write locks';
  const state = isPending ? 'loading' : error && !data ? 'error' : 'ready';
  return (
    <section className={styles.section} aria-labelledby="slot-locks-title" data-testid="slot-locks" data-loading-state={state}>
      <div className={styles.sectionHead}>
        <div>
          <Heading id="slot-locks-title" className={heading === 'h1' ? styles.pageTitle : styles.sectionTitle}>
            {title}
          </Heading>
          <p className={styles.lede}>
            Each permit, reader or writer is a lock on a slot key: it counts only where one token is on a quorum of the masters.
          </p>
        </div>
        <label className={styles.search}>
          <span>Search names</span>
          <input type="search" value={search} onChange={(e) => setSearch(e.target.value)} placeholder="e.g. exports" />
        </label>
      </div>
      {filter}
      {data ? <ScanNotice data={data} /> : null}
      {state === 'loading' && <p className="muted">Reading every master…</p>}
      {state === 'error' && (
        <p className="callout callout-bad" role="alert">
          Could not read the semaphores and read-write locks: {error?.message}
        </p>
      )}
      {data && data.items.length === 0 && (
        <p className="muted" data-testid="slot-locks-empty">
          {search.trim()
            ? `No ${title.toLowerCase()} named like “${search.trim()}”.`
            : `No ${title.toLowerCase()} hold keys on the masters.`}
        </p>
      )}
      {data && data.items.length > 0 && (
        <table className={`table table-stack ${styles.table}`} aria-labelledby="slot-locks-title">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Kind</th>
              <th scope="col">Holds</th>
              <th scope="col">Holders</th>
              <th scope="col">Notes</th>
            </tr>
          </thead>
          <tbody>
            {data.items.map((lock) => (
              <tr key={`${lock.kind}:${lock.resource}`} data-testid="slot-lock-row" data-kind={lock.kind} data-resource={lock.resource}>
                <th scope="row" className={styles.name}>
                  <Link href={detailHref(lock.kind, lock.resource)} className="mono">
                    {lock.resource}
                  </Link>
                </th>
                <td data-label="Kind">
                  <KindBadge kind={lock.kind} />
                </td>
                <td data-label="Holds" data-testid="slot-held" className={styles.held}>
                  {heldText(lock)}
                </td>
                <td data-label="Holders">
                  <HolderList lock={lock} />
                </td>
                <td data-label="Notes">
                  <SlotNotes lock={lock} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {data && (
        <p className="muted small">
          Read {formatClock(data.readAt)}, quorum {data.quorum}.
        </p>
      )}
    </section>
  );
}
