'use client';

import type { LockListPage } from '@/lib/client/queries';
import { formatAgo, formatClock, formatCount } from './format';
import controls from './lock-list-controls.module.css';
import styles from './lock-matrix.module.css';
import { staleAfterMs } from '@/lib/client/freshness';

/** What the Locks screen says about its reading of the masters: when, how far, how many. */

type PageFacts = Pick<LockListPage, 'readAt' | 'scanMs' | 'quorum' | 'nodes' | 'complete' | 'scannedKeys' | 'total' | 'matched' | 'index'>;

/** How much of the masters a page read: all, some, or none (a list read from no master is not an empty list). */
export function readExtent(latest: Pick<LockListPage, 'nodes'>): { state: 'read' | 'partial' | 'unread'; answered: number; total: number } {
  const total = latest.nodes.length;
  const answered = latest.nodes.filter((n) => n.ok).length;
  return { state: total > 0 && answered === 0 ? 'unread' : answered < total ? 'partial' : 'read', answered, total };
}

/** The title row's reading: when the list was read, how long the scan took, the quorum. */
export function ReadAt({ latest, now, onRefresh }: { latest: PageFacts | undefined; now: number | null; onRefresh: () => void }) {
  const extent = latest ? readExtent(latest) : null;
  const stale = !!latest && !!now && now - latest.readAt > staleAfterMs();
  // Green only for a fresh reading of every master; grey when none answered; amber when stale or partial.
  const state = !extent ? 'loading' : extent.state === 'unread' ? 'unread' : stale ? 'stale' : extent.state;
  return (
    <div className={controls.readAt} data-testid="locks-read-at" data-state={state}>
      {latest && extent ? (
        <>
          <span
            className={`${controls.readDot} ${state === 'unread' ? controls.readUnknown : state === 'read' ? '' : controls.readStale}`}
            aria-hidden="true"
          />
          {extent.state === 'unread'
            ? 'Nothing read, no master answered'
            : extent.state === 'partial'
              ? `Read from ${extent.answered} of ${extent.total} masters`
              : 'Read'}{' '}
          <time dateTime={new Date(latest.readAt).toISOString()}>{formatClock(latest.readAt)}</time>
          <span className="muted">
            {' · '}
            {now ? formatAgo(latest.readAt, now) : ''}
            {' · '}
            {!latest.complete ? (
              `scanning… ${formatCount(latest.scannedKeys)} keys so far`
            ) : latest.index ? (
              <span title="Kept up to date by keyspace notifications: only the locks that changed were read again">
                live index, {Math.round(latest.scanMs)} ms
              </span>
            ) : (
              `scan ${Math.round(latest.scanMs)} ms`
            )}
            {' · '}quorum {latest.quorum} of {latest.nodes.length}
          </span>
        </>
      ) : (
        <span className="muted">Reading the masters…</span>
      )}
      <button
        type="button"
        className={`button button-ghost ${controls.refresh}`}
        onClick={onRefresh}
        aria-label="Reload the list from the first page"
      >
        ↻
      </button>
    </div>
  );
}

/**
 * Shown while the first page is an early one: the scan of a large keyspace is still running, so
 * the rows are the first locks found so far (each read directly on every node, so each is exact),
 * and the page is asked for again until the scan ends.
 */
export function ScanProgress({ page }: { page: Pick<LockListPage, 'complete' | 'scannedKeys' | 'total'> | undefined }) {
  if (!page || page.complete) return null;
  return (
    <p className={`callout ${controls.notice}`} role="status" data-testid="locks-scanning">
      <strong>Still scanning the masters</strong>: {formatCount(page.scannedKeys)} keys read so far, {formatCount(page.total)} locks found.{' '}
      These rows are the first locks found, each read directly from every node; the full list, its counts and more pages follow when the
      scan ends.
    </p>
  );
}

/** Shown when a pattern read stopped at its bound of keys on some masters (lib/server/scan-budget.ts). */
export function ScanTruncated({ page }: { page: Pick<LockListPage, 'nodes'> | undefined }) {
  const cut = page?.nodes.filter((n) => n.truncated) ?? [];
  if (cut.length === 0) return null;
  return (
    <p className={`callout ${controls.notice}`} role="status" data-testid="locks-truncated">
      <strong>Not every key was read</strong>: the scan stopped at its bound of keys on node{cut.length > 1 ? 's' : ''}{' '}
      {cut.map((n) => n.node).join(', ')}, so locks may be missing from this list. Narrow the pattern to see them.
    </p>
  );
}

/** The matrix footer: how many rows are loaded of how many match, or that the scan is still running. */
export function MatrixFooter({
  latest,
  loaded,
  matching,
  hasNextPage,
}: {
  latest: PageFacts | undefined;
  loaded: number;
  matching: boolean;
  hasNextPage: boolean;
}) {
  return (
    <div className={styles.footer} data-testid="locks-footer">
      <span>
        {latest && !latest.complete && (
          <>
            Scanning · <strong>{formatCount(loaded)}</strong> {matching ? 'matching ' : ''}locks shown of{' '}
            <strong data-testid="locks-matched">{formatCount(latest.matched)}</strong> found so far
          </>
        )}
        {latest?.complete && readExtent(latest).state === 'unread' && (
          <span className="muted" data-testid="locks-footer-unread">
            No master answered: how many {matching ? 'matching ' : ''}locks there are is unknown
          </span>
        )}
        {latest?.complete && readExtent(latest).state !== 'unread' && (
          <>
            <strong>{formatCount(loaded)}</strong> of{' '}
            <strong data-testid="locks-matched">
              {readExtent(latest).state === 'partial' ? '≥ ' : ''}
              {formatCount(latest.matched)}
            </strong>{' '}
            {matching ? 'matching ' : ''}locks loaded
            {readExtent(latest).state === 'partial' ? ` · ${readExtent(latest).answered} of ${readExtent(latest).total} masters read` : ''}
            {hasNextPage ? ' · more load as you scroll' : ''}
          </>
        )}
        {!latest && '\u00a0'}
      </span>
      <span className={styles.hints}>
        <kbd>j</kbd>/<kbd>k</kbd> move · <kbd>Enter</kbd> open · <kbd>/</kbd> search
      </span>
    </div>
  );
}

/**
 * A state tab's count: the whole list's once read; '…' while the scan is still running; '—' when no
 * node could be read (a zero would say "none"); '≥ n' when some could not (their locks are missing).
 */
export function tabCount(latest: Pick<LockListPage, 'complete' | 'nodes'> | undefined, count: number | undefined): string {
  if (!latest) return '–';
  const unread = latest.nodes.filter((n) => !n.ok).length;
  if (latest.nodes.length > 0 && unread === latest.nodes.length) return '—';
  if (!latest.complete) return '…';
  return unread > 0 ? `≥ ${formatCount(count ?? 0)}` : formatCount(count ?? 0);
}
