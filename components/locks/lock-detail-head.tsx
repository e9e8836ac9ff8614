import Link from 'next/link';
import type { LockDetailResponse } from '@/lib/api/locks';
import { CopyButton } from '../ui/copy-button';
import { formatAgo, formatClock } from './format';
import { StateBadge } from './state-badge';
import styles from './lock-detail.module.css';

/**
 * The lock detail's breadcrumb and head: the resource (copyable), its state or "free", its key and
 * when it was read; for operators, force-release (and releasing every token of a split lock).
 */
export function LockDetailHead({
  resource,
  data,
  now,
  isOperator,
  tokenCount,
  onReleaseAll,
  onForceRelease,
}: {
  resource: string;
  data: LockDetailResponse;
  now: number;
  isOperator: boolean;
  tokenCount: number;
  onReleaseAll: () => void;
  onForceRelease: () => void;
}) {
  const view = data.view;
  return (
    <>
      <nav className={styles.crumbs} aria-label="Breadcrumb">
        <Link href="/locks">Locks</Link>
        <span aria-hidden="true">/</span>
        <span className="mono">{resource}</span>
      </nav>

      <header className={styles.head}>
        <div className={styles.headMain}>
          <div className={styles.headTitle}>
            <h1 className={styles.resource}>{resource}</h1>
            <CopyButton value={resource} what="resource name" />
            {view ? (
              <StateBadge state={view.state} large />
            ) : (
              <span className={styles.freeBadge} data-testid="lock-state" data-state="free">
                free
              </span>
            )}
          </div>
          <div className={styles.headSub}>
            <code>{data.key}</code>
            <span>
              · read {formatClock(data.readAt)}
              {now ? ` (${formatAgo(data.readAt, now)})` : ''}
            </span>
          </div>
        </div>
        {isOperator && (
          <div className={styles.headActions}>
            {view && tokenCount > 1 ? (
              <button
                type="button"
                className={`button ${styles.danger}`}
                onClick={onReleaseAll}
                data-testid="release-all-tokens-button"
                title="One previewed force-release of every token this lock shows"
              >
                Release all {tokenCount} tokens…
              </button>
            ) : null}
            <button
              type="button"
              className={`button ${styles.danger}`}
              onClick={onForceRelease}
              disabled={!view}
              data-testid="force-release-button"
              title={view ? 'Compare-and-delete the token you see here, on every node' : 'Nothing to release'}
            >
              Force-release…
            </button>
          </div>
        )}
      </header>
    </>
  );
}
