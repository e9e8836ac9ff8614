'use client';

import { useQuery } from '@tanstack/react-query';
import { usePathname, useRouter, useSearchParams } from 'next/navigation';
import { Fragment, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { auditViewQuery, type AuditView } from '@/lib/client/ops-queries';
import { auditUrl } from '@/lib/client/queries';
import { ReadAge } from '../ui/clock';
import { AuditFilters, LIMITS, SINCE_PRESETS } from './audit-filters';
import { OlderEntries } from './older-entries';
import { DetailRow, EntryRow } from './audit-rows';
import styles from './audit.module.css';

const PAGE_SIZE = 50;

/** Who did what to which node or lock, read from every master; filter, page, expand, export. */
export function AuditScreen() {
  const params = useSearchParams();
  const router = useRouter();
  const pathname = usePathname();
  const actor = params.get('actor') ?? '';
  const action = params.get('action') ?? '';
  const sinceParam = params.get('since') ?? '24h';
  const limit = LIMITS.includes(Number(params.get('limit'))) ? Number(params.get('limit')) : 500;
  const preset = SINCE_PRESETS.find((p) => p.value === sinceParam);
  const absoluteSince = preset ? undefined : Number.isFinite(Number(sinceParam)) ? Number(sinceParam) : undefined;

  const [page, setPage] = useState(0);
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  const tbody = useRef<HTMLTableSectionElement>(null);

  const view: AuditView = {
    actor: actor || undefined,
    action: action || undefined,
    limit,
    since: absoluteSince,
    sinceSpanMs: preset?.ms ?? undefined,
  };
  const query = useQuery(auditViewQuery(view));
  const data = query.data;
  const entries = useMemo(() => data?.entries ?? [], [data]);
  const pages = Math.max(1, Math.ceil(entries.length / PAGE_SIZE));
  const current = Math.min(page, pages - 1);
  const shown = entries.slice(current * PAGE_SIZE, current * PAGE_SIZE + PAGE_SIZE);
  const actors = useMemo(() => [...new Set(entries.map((e) => e.actor))].sort(), [entries]);

  const setParam = (changes: Record<string, string | null>) => {
    const next = new URLSearchParams(params.toString());
    for (const [k, v] of Object.entries(changes)) {
      if (v === null || v === '') next.delete(k);
      else next.set(k, v);
    }
    setPage(0);
    const qs = next.toString();
    router.replace(qs ? `${pathname}?${qs}` : pathname, { scroll: false });
  };

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

  const filters = data?.filters;
  const csvHref = filters ? auditUrl(filters, 'csv') : undefined;
  const jsonHref = filters ? auditUrl(filters, 'json') : undefined;
  const state = query.isPending ? 'loading' : query.error && !data ? 'error' : entries.length ? 'ready' : 'empty';
  const filtered = Boolean(actor || action || sinceParam !== 'all');

  return (
    <>
      <div className={styles.header}>
        <div>
          <h1 className={styles.title}>Audit log</h1>
          <p className={styles.subtitle}>
            Every node action (an operator’s or a scenario’s), force-release, scenario run and sign-in, written to every master and read
            back from all of them.
          </p>
        </div>
        <div className={styles.exports}>
          <a
            className={`button ${styles.exportLink}`}
            href={csvHref}
            download="redlock-audit.csv"
            aria-disabled={!csvHref}
            data-testid="export-csv"
          >
            ⤓ Export CSV
          </a>
          <a
            className={`button ${styles.exportLink}`}
            href={jsonHref}
            download="redlock-audit.json"
            aria-disabled={!jsonHref}
            data-testid="export-json"
          >
            ⤓ Export JSON
          </a>
        </div>
      </div>

      <AuditFilters state={{ actor, action, sinceParam, limit, absoluteSince }} actors={actors} setParam={setParam}>
        <div className={styles.filterMeta} aria-live="polite">
          {data ? (
            <>
              <span data-testid="audit-count">
                {entries.length.toLocaleString()} entr{entries.length === 1 ? 'y' : 'ies'}
                {entries.length >= limit ? <OlderEntries limit={limit} onMore={(next) => setParam({ limit: String(next) })} /> : null}
                {query.isPlaceholderData ? ' · updating…' : ''}
              </span>
              <span className={data.nodesFailed ? styles.warnText : undefined}>
                read from {data.nodesRead} of {data.nodesRead + data.nodesFailed} masters
                {data.nodesFailed ? ' — entries only the others hold are missing' : ''} ·{' '}
                <ReadAge at={query.dataUpdatedAt} prefix="updated" />
              </span>
            </>
          ) : null}
          {query.error && data ? (
            <span className={styles.badText} role="alert">
              refresh failed: {query.error.message}
            </span>
          ) : null}
        </div>
      </AuditFilters>

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
                  {query.error?.message}
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
        {entries.length > 0 ? (
          <nav className={styles.pager} aria-label="Pages">
            <span data-testid="audit-range">
              {(current * PAGE_SIZE + 1).toLocaleString()}–{Math.min(entries.length, (current + 1) * PAGE_SIZE).toLocaleString()} of{' '}
              {entries.length.toLocaleString()}
            </span>
            <span className={styles.pagerButtons}>
              <button
                type="button"
                className="button"
                disabled={current === 0}
                onClick={() => setPage(current - 1)}
                aria-label="Previous page"
              >
                ‹ Previous
              </button>
              <span>
                page {current + 1} of {pages}
              </span>
              <button
                type="button"
                className="button"
                disabled={current >= pages - 1}
                onClick={() => setPage(current + 1)}
                aria-label="Next page"
              >
                Next ›
              </button>
            </span>
          </nav>
        ) : null}
      </div>
    </>
  );
}
