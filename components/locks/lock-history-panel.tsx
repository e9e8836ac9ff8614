'use client';

import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import type { LockHold } from '@/lib/api/lock-history';
import { lockHistoryQuery } from '@/lib/client/queries';
import { formatDateTime, formatDurationMs } from '../ui/format';
import styles from './lock-detail.module.css';

const ENDED: Record<LockHold['ended'], { label: string; tone: string }> = {
  released: { label: 'released', tone: 'ok' },
  'force-released': { label: 'force-released', tone: 'warn' },
  expired: { label: 'expired (no release)', tone: 'info' },
  held: { label: 'held now', tone: 'ok' },
};

/** Where a grant time comes from, when the lock service did not record the grant. */
const GRANT_TIME: Record<Exclude<LockHold['grantTime'], 'recorded'>, string> = {
  'holder-clock': 'granted, by the holder’s clock',
  'first-seen': 'granted earlier: when is not known',
};

/**
 * A history table's columns, in order: each is the head's text and its cells' `data-label` (the
 * cell's name where a table stacks into cards), so that head and cells cannot drift apart. A table
 * may put columns of its own after `granted` (the slot history's Slot): `HistoryTable`'s `after`.
 */
const COLUMN = {
  granted: 'Granted',
  principal: 'Authenticated as',
  owner: 'Claims to be',
  fence: 'Fence',
  heldFor: 'Held for',
  ended: 'Ended',
} as const;

/** A history table's head: Granted, the columns a table adds after it (`after`), then those of `HoldCells`. */
function HistoryHead({ after = [] }: { after?: readonly string[] }) {
  const [granted, ...hold] = Object.values(COLUMN);
  return (
    <thead>
      <tr>
        {[granted, ...after, ...hold].map((name) => (
          <th key={name} scope="col">
            {name}
          </th>
        ))}
      </tr>
    </thead>
  );
}

/**
 * A history table in its frame, the mutex's and the slot history's: a real table at every width
 * (its head row stays for screen readers), whose rows stack into cards below 900 px, each cell led
 * by its `data-label` (`.table-stack`, app/globals.css, owns the stacking); wider than its card at
 * a desktop width, it scrolls inside its own region (`label` names it), never the page.
 */
export function HistoryTable({
  label,
  after,
  className = '',
  children,
}: {
  label: string;
  after?: readonly string[];
  className?: string;
  /** The rows: `GrantedCell`, the `after` columns' cells, then `HoldCells`. */
  children: ReactNode;
}) {
  return (
    <div className={styles.historyScroll} role="region" aria-label={label} tabIndex={0}>
      <table className={`table table-stack ${styles.nodeTable} ${className}`}>
        <HistoryHead after={after} />
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/** When a hold was granted (and where that time comes from): the first cell of a history row. */
export function GrantedCell({ hold }: { hold: LockHold }) {
  return (
    <td className={styles.eventTime} data-label={COLUMN.granted} data-testid="history-granted" data-grant-time={hold.grantTime}>
      {hold.grantTime === 'first-seen' ? 'first seen ' : ''}
      {formatDateTime(hold.grantedAt)}
      {hold.grantTime !== 'recorded' && <span className={styles.nodeLabel}>{GRANT_TIME[hold.grantTime]}</span>}
    </td>
  );
}

/** A history row's cells after the grant: who, what it claimed, fence, how long, how it ended (the slot history shares them; `data-label` names each cell where a table stacks into cards). */
export function HoldCells({ hold }: { hold: LockHold }) {
  const ended = ENDED[hold.ended];
  return (
    <>
      <td data-label={COLUMN.principal}>
        {hold.principal !== null ? (
          <strong>{hold.principal}</strong>
        ) : (
          <span className="muted" title="Taken by a client of the masters outside the lock service, or before the history's window">
            not authenticated: taken outside the lock service
          </span>
        )}
        <span className={styles.nodeLabel}>token {hold.token}…</span>
      </td>
      <td data-label={COLUMN.owner}>{hold.metadata.owner ?? <span className="muted">—</span>}</td>
      <td className={styles.eventTime} data-label={COLUMN.fence}>
        {hold.fence ?? '—'}
      </td>
      <td data-label={COLUMN.heldFor}>
        {hold.endedAt === null
          ? 'still held'
          : `${hold.grantTime === 'first-seen' ? 'at least ' : ''}${formatDurationMs(hold.endedAt - hold.grantedAt)}`}
        {hold.extensions > 0 ? <span className={styles.nodeLabel}>{hold.extensions} extend(s)</span> : null}
      </td>
      <td data-label={COLUMN.ended}>
        <span className={`${styles.pill} ${styles[`pill-${ended.tone}`]}`}>{ended.label}</span>
      </td>
    </>
  );
}

/**
 * Who held this resource, when, for how long, through which key, and how each hold ended: the
 * lock history kept on the masters. "Who" is the principal the console authenticated;
 * what the client said of itself (its `owner`) is shown apart, since a client chooses it.
 */
export function LockHistoryPanel({ resource }: { resource: string }) {
  const { data, error, isPending } = useQuery(lockHistoryQuery(resource));
  return (
    <section
      className={styles.card}
      aria-labelledby="history-title"
      data-testid="lock-history"
      data-loading-state={isPending ? 'loading' : error ? 'error' : 'ready'}
    >
      <div className={styles.cardHead}>
        <h2 id="history-title">History</h2>
        <span className="muted small">
          {data
            ? `read from ${data.nodesRead} of ${data.nodesRead + data.nodesFailed} masters`
            : 'grants, extends, releases, force-releases'}
        </span>
      </div>
      {error ? (
        <p role="alert" className={styles.emptyNote}>
          The history could not be read: {error.message}
        </p>
      ) : isPending ? (
        <p className={styles.emptyNote}>Reading the masters…</p>
      ) : data.holds.length === 0 ? (
        <p className={styles.emptyNote}>
          Nothing recorded: the history keeps a resource&apos;s last 32 entries for a week, and the 2,000 resources written most recently.
        </p>
      ) : (
        <HistoryTable label="History of the holds">
          {data.holds.map((hold) => (
            <tr key={hold.token} data-testid="history-hold" data-ended={hold.ended}>
              <GrantedCell hold={hold} />
              <HoldCells hold={hold} />
            </tr>
          ))}
        </HistoryTable>
      )}
    </section>
  );
}
