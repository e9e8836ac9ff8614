import { Fragment, useRef, useState, type KeyboardEvent } from 'react';
import type { AuditEntry } from '@/lib/api/audit';
import { DetailRow, EntryRow } from './audit-rows';
import styles from './audit.module.css';

export const PAGE_SIZE = 50;

export type AuditTableState = 'loading' | 'error' | 'empty' | 'ready';

/**
 * The entries, newest first, a page at a time: skeleton rows while loading, why it could not be
 * read, what an empty log means, and each entry's row with its details opened in place (j / k
 * move between rows, Enter / Space open one).
 */
export function AuditTable({
  state,
  entries,
  errorMessage,
  filtered,
  page,
  onPage,
}: {
  state: AuditTableState;
  entries: readonly AuditEntry[];
  errorMessage: string | undefined;
  filtered: boolean;
  page: number;
  onPage: (page: number) => void;
}) {
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  const tbody = useRef<HTMLTableSectionElement>(null);
  const pages = Math.max(1, Math.ceil(entries.length / PAGE_SIZE));
  const current = Math.min(page, pages - 1);
  const shown = entries.slice(current * PAGE_SIZE, current * PAGE_SIZE + PAGE_SIZE);

  const toggle = (id: string) =>
    setExpanded((s) => {
      const next = new Set(s);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });

  // j / k move between rows, Enter / Space open one (the shell lists these keys behind `?`).
  const onRowsKey = (e: KeyboardEvent<HTMLTableSectionElement>) => {
    if (e.key !== 'j' && e.key !== 'k') return;
    const rows = [...(tbody.current?.querySelectorAll<HTMLElement>('tr[data-entry]') ?? [])];
    const at = rows.indexOf(document.activeElement as HTMLElement);
    const next = rows[Math.max(0, Math.min(rows.length - 1, at + (e.key === 'j' ? 1 : -1)))];
    if (next) {
      e.preventDefault();
      next.focus();
    }
  };

  return (
    <div
      className={styles.tableWrap}
      data-testid="audit-table"
      data-loading-state={state}
      role="region"
      aria-label="Audit entries"
      tabIndex={0}
    >
      <table className={`${styles.table} ${styles.entries}`}>
        <caption className="visually-hidden">Audit entries, newest first</caption>
        <AuditColumns />
        <tbody ref={tbody} onKeyDown={onRowsKey}>
          {state === 'loading'
            ? Array.from({ length: 8 }, (_, i) => (
                <tr key={i} className={styles.skeletonRow} aria-hidden="true">
                  {[70, 60, 55, 50, 40, 80, 0].map((w, j) => (
                    <td key={j}>{w ? <span className={styles.skeleton} style={{ width: `${w}%` }} /> : null}</td>
                  ))}
                </tr>
              ))
            : null}
          {state === 'error' ? (
            <tr>
              <td colSpan={7} className={styles.empty} role="alert">
                <strong>Could not read the audit log</strong>
                {errorMessage}
              </td>
            </tr>
          ) : null}
          {state === 'empty' ? (
            <tr>
              <td colSpan={7} className={styles.empty} data-testid="audit-empty">
                <strong>{filtered ? 'No entries match these filters' : 'Nothing audited yet'}</strong>
                {filtered
                  ? 'Widen the time range or clear a filter.'
                  : 'Node actions, force-releases and sign-ins appear here as they happen.'}
              </td>
            </tr>
          ) : null}
          {shown.map((e) => (
            <Fragment key={e.id}>
              <EntryRow entry={e} open={expanded.has(e.id)} onToggle={() => toggle(e.id)} />
              {expanded.has(e.id) ? <DetailRow entry={e} /> : null}
            </Fragment>
          ))}
        </tbody>
      </table>
      {entries.length > 0 ? <AuditPager current={current} pages={pages} total={entries.length} onPage={onPage} /> : null}
    </div>
  );
}

function AuditColumns() {
  return (
    <thead>
      <tr>
        <th scope="col" className={styles.colTime}>
          Time
        </th>
        <th scope="col" className={styles.colActor}>
          Actor
        </th>
        <th scope="col" className={styles.colAction}>
          Action
        </th>
        <th scope="col" className={styles.colTarget}>
          Target
        </th>
        <th scope="col" className={styles.colOutcome}>
          Outcome
        </th>
        <th scope="col">Reason · detail</th>
        <th scope="col" className={styles.colToggle}>
          <span style={{ position: 'absolute', width: 1, height: 1, overflow: 'hidden', clip: 'rect(0 0 0 0)' }}>Details</span>
        </th>
      </tr>
    </thead>
  );
}

/** Which entries this page shows, of how many, and the way to the pages either side. */
function AuditPager({ current, pages, total, onPage }: { current: number; pages: number; total: number; onPage: (page: number) => void }) {
  return (
    <nav className={styles.pager} aria-label="Pages">
      <span data-testid="audit-range">
        {(current * PAGE_SIZE + 1).toLocaleString()}–{Math.min(total, (current + 1) * PAGE_SIZE).toLocaleString()} of{' '}
        {total.toLocaleString()}
      </span>
      <span className={styles.pagerButtons}>
        <button type="button" className="button" disabled={current === 0} onClick={() => onPage(current - 1)} aria-label="Previous page">
          ‹ Previous
        </button>
        <span>
          page {current + 1} of {pages}
        </span>
        <button type="button" className="button" disabled={current >= pages - 1} onClick={() => onPage(current + 1)} aria-label="Next page">
          Next ›
        </button>
      </span>
    </nav>
  );
}
