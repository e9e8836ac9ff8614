import type { UseQueryResult } from '@tanstack/react-query';
import Link from 'next/link';
import type { BulkForceReleaseResponse, ForceReleaseResponse } from '@/lib/api/locks';
import { DryRunHead } from './release-error';
import { TokenChip } from './token-chip';
import styles from './force-release-dialog.module.css';

/** What one item would do / did, in a few words: "deletes on 3 of 5", "left alone", … */
function itemVerdict(r: ForceReleaseResponse): { text: string; tone: 'ok' | 'warn' | 'bad' | 'danger' | 'muted' } {
  const count = (o: string) => r.nodes.filter((n) => n.outcome === o).length;
  const total = r.nodes.length;
  const unreachable = count('unreachable');
  const tail = unreachable ? ` · ${unreachable} unreachable` : '';
  if (r.dryRun) {
    const will = count('would-delete');
    return will
      ? { text: `will delete on ${will} of ${total}${tail}`, tone: 'danger' }
      : { text: `nothing to delete${tail}`, tone: 'muted' };
  }
  if (r.deleted) return { text: `deleted on ${r.deleted} of ${total}${tail}`, tone: unreachable ? 'warn' : 'ok' };
  return count('other-holder')
    ? { text: 'left alone: changed hands', tone: 'warn' }
    : { text: `nothing deleted${tail}`, tone: unreachable ? 'bad' : 'muted' };
}

/**
 * The batch lock by lock: the dry run (what each item will do, and the verdict), or once released
 * each item's result with its audit entry and the summary.
 */
export function BulkReleaseResults({
  preview,
  result,
  willDelete,
  itemCount,
}: {
  preview: UseQueryResult<BulkForceReleaseResponse>;
  result: BulkForceReleaseResponse | undefined;
  willDelete: number;
  itemCount: number;
}) {
  const shown = result ?? preview.data;
  return (
    <section
      aria-labelledby="bulk-preview-title"
      className={`${styles.preview} ${styles.bulkPreview}`}
      data-testid="bulk-release-preview"
      data-loading-state={preview.isFetching ? 'loading' : preview.isError ? 'error' : 'ready'}
    >
      <DryRunHead
        titleId="bulk-preview-title"
        title={result ? 'Result, lock by lock' : '1 · Dry run: what each lock will do'}
        preview={preview}
        recheck={!result}
      />
      {!preview.isError &&
        (shown ? (
          <ItemTable results={shown.results} released={!!result} />
        ) : (
          <div className={styles.outcomesLoading} aria-busy="true">
            Asking every node…
          </div>
        ))}
      {preview.data && !result && (
        <p className={`${styles.verdict} ${willDelete === 0 ? styles.verdictWarn : ''}`} data-testid="bulk-release-verdict">
          {willDelete === 0
            ? 'Nothing to release: every token expired or changed hands since you picked it.'
            : willDelete === itemCount
              ? `All ${itemCount} will delete keys.`
              : `${willDelete} of ${itemCount} will delete keys; the others have nothing left to delete.`}
        </p>
      )}
      {result && (
        <p className={styles.verdict} role="status" data-testid="bulk-release-summary">
          Deleted {result.deleted} key{result.deleted === 1 ? '' : 's'} over {result.results.filter((r) => r.deleted > 0).length} of{' '}
          {result.results.length} tokens. <Link href="/audit?action=lock.force-release">Open the audit log</Link>
        </p>
      )}
    </section>
  );
}

/** One row per (lock, token): what it will do, or (released) what it did and its audit entry. */
function ItemTable({ results, released }: { results: ForceReleaseResponse[]; released: boolean }) {
  return (
    <table className={`${styles.outcomes} table-stack`} data-testid="bulk-release-results">
      <thead>
        <tr>
          <th scope="col">Lock</th>
          <th scope="col">Token</th>
          <th scope="col">{released ? 'Result' : 'Will'}</th>
          {released && <th scope="col">Audit</th>}
        </tr>
      </thead>
      <tbody>
        {results.map((r) => {
          const v = itemVerdict(r);
          return (
            <tr key={`${r.resource}\u0000${r.token}`} data-testid="bulk-release-row" data-resource={r.resource} data-deleted={r.deleted}>
              <th scope="row" className={`mono ${styles.lockName}`}>
                {r.resource}
              </th>
              <td data-label="Token">
                <TokenChip token={r.token} peers={results.filter((x) => x.resource === r.resource).map((x) => x.token)} />
              </td>
              <td data-label={released ? 'Result' : 'Will'}>
                <span className={`${styles.pill} ${styles[`pill-${v.tone}`]}`}>{v.text}</span>
              </td>
              {released && (
                <td data-label="Audit">
                  {r.auditId ? <code className="small">{r.auditId.slice(0, 8)}</code> : <span className="muted">—</span>}
                </td>
              )}
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
