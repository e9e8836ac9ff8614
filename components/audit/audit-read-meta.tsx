import type { UseQueryResult } from '@tanstack/react-query';
import type { AuditResponse } from '@/lib/api/audit';
import { ReadAge } from '../ui/clock';
import { OlderEntries } from './older-entries';
import styles from './audit.module.css';

/** Under the filters: how many entries, from how many masters, how long ago, and a refresh that failed over what is shown. */
export function AuditReadMeta({
  query,
  limit,
  onMore,
}: {
  query: UseQueryResult<AuditResponse>;
  limit: number;
  onMore: (limit: number) => void;
}) {
  const data = query.data;
  const entries = data?.entries ?? [];
  return (
    <div className={styles.filterMeta} aria-live="polite">
      {data ? (
        <>
          <span data-testid="audit-count">
            {entries.length.toLocaleString()} entr{entries.length === 1 ? 'y' : 'ies'}
            {entries.length >= limit ? <OlderEntries limit={limit} onMore={onMore} /> : null}
            {query.isPlaceholderData ? ' · updating…' : ''}
          </span>
          <span className={data.nodesFailed ? styles.warnText : undefined}>
            read from {data.nodesRead} of {data.nodesRead + data.nodesFailed} masters
            {data.nodesFailed ? ' — entries only the others hold are missing' : ''} · <ReadAge at={query.dataUpdatedAt} prefix="updated" />
          </span>
        </>
      ) : null}
      {query.error && data ? (
        <span className={styles.badText} role="alert">
          refresh failed: {query.error.message}
        </span>
      ) : null}
    </div>
  );
}
