'use client';

import Link from 'next/link';
import type { LockListPage } from '@/lib/client/queries';
import { useConnectionHealth } from '@/lib/client/connection-health';
import { isStale } from '@/lib/client/freshness';
import { nodeList } from '@/lib/client/masters-reading';
import { formatClock, formatCount } from './format';
import { useNow } from './countdown';
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

/** The lock list is read every second (lockWindowQuery): its stale age follows (freshness.ts). */
const LIST_POLL_MS = 1_000;

/**
 * No row to show: nothing matches the filters, or no lock is held at all (and where locks come
 * from) — or nothing could be read, which is not "none": with no node read the screen says it
 * cannot tell, with some unread it says the empty list is theirs alone, and a stale reading says
 * when it was true (`data-state`: unknown, stale, partial, none).
 */
export function MatrixEmpty({
  filtering,
  pattern,
  total,
  isOperator,
  onClearFilters,
  latest,
}: {
  filtering: boolean;
  pattern: string | undefined;
  total: number | null;
  isOperator: boolean;
  onClearFilters: () => void;
  /** The reading the empty list comes from: its nodes (which answered) and when it arrived. */
  latest?: Pick<LockListPage, 'nodes' | 'readAt' | 'receivedAt'>;
}) {
  const health = useConnectionHealth();
  const now = useNow();
  const unread = latest ? latest.nodes.filter((n) => !n.ok) : [];
  const knowledge =
    latest && latest.nodes.length > 0 && unread.length === latest.nodes.length
      ? 'unknown'
      : latest && (health.failing || isStale(latest.receivedAt, now, LIST_POLL_MS))
        ? 'stale'
        : unread.length > 0
          ? 'partial'
          : 'none';
  if (knowledge === 'unknown') {
    return (
      <div className={styles.empty} data-testid="locks-empty" data-state="unknown" role="status">
        <strong>Cannot tell whether any lock is held</strong>
        <span>
          {nodeList(unread.map((n) => n.node))} could not be read ({unread[0]?.error ?? 'no answer'}): this list is empty because nothing
          was read, not because nothing is held.
        </span>
      </div>
    );
  }
  if (knowledge === 'stale' && !filtering && !pattern) {
    return (
      <div className={styles.empty} data-testid="locks-empty" data-state="stale" role="status">
        <strong>No locks were held at {formatClock(latest!.readAt)}, the last reading</strong>
        <span>
          {health.failing ? 'The console is not answering' : 'The list has not been read again since'}: locks may have been taken since.
        </span>
      </div>
    );
  }
  return (
    <div className={styles.empty} data-testid="locks-empty" data-state={knowledge}>
      {knowledge === 'partial' && !filtering && !pattern ? (
        <>
          <strong>No locks on the {latest!.nodes.length - unread.length} nodes that answered</strong>
          <span>
            {nodeList(unread.map((n) => n.node))} could not be read: a lock held only there would not show, and a lock needs a majority.
          </span>
        </>
      ) : filtering || pattern ? (
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
