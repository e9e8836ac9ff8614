'use client';

import { useQuery } from '@tanstack/react-query';
import { usePathname, useRouter, useSearchParams } from 'next/navigation';
import { Fragment, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { AUDIT_ACTIONS, AUDIT_FAMILIES, type AuditEntry } from '@/lib/api/audit';
import { auditViewQuery, type AuditView } from '@/lib/client/ops-queries';
import { auditUrl } from '@/lib/client/queries';
import { formatAge, ReadAge, useNow } from '../overview/clock';
import { AuditDiff, showDetail } from './audit-diff';
import styles from './audit.module.css';

const PAGE_SIZE = 50;

const SINCE_PRESETS = [
  { value: '15m', label: 'Last 15 minutes', ms: 15 * 60_000 },
  { value: '1h', label: 'Last hour', ms: 3_600_000 },
  { value: '24h', label: 'Last 24 hours', ms: 86_400_000 },
  { value: '7d', label: 'Last 7 days', ms: 7 * 86_400_000 },
  { value: 'all', label: 'All time', ms: null },
] as const;

const FAMILY_LABEL: Record<string, string> = {
  node: 'Every node action',
  lock: 'Every lock action',
  login: 'Every sign-in',
  logout: 'Every sign-out',
};
const GROUP_LABEL: Record<string, string> = {
  node: 'Node actions',
  lock: 'Locks',
  login: 'Sign-ins',
  logout: 'Sign-outs',
  scenario: 'Scenarios',
};

const ACTION_GROUPS: Array<{ label: string; options: Array<[string, string]> }> = [
  {
    label: 'Families',
    options: [['', 'All actions'], ...AUDIT_FAMILIES.map((f): [string, string] => [f, FAMILY_LABEL[f] ?? `Every ${f} action`])],
  },
  // Every action the server records (lib/api/audit.ts), grouped by family.
  ...AUDIT_FAMILIES.map((family) => ({
    label: GROUP_LABEL[family] ?? family,
    options: AUDIT_ACTIONS.filter((a) => a.startsWith(`${family}.`) || a === family).map((a): [string, string] => [a, a]),
  })),
];

const LIMITS = [100, 500, 1_000, 5_000];

function outcomeTone(outcome: string): 'ok' | 'warn' | 'bad' {
  if (outcome === 'ok') return 'ok';
  if (outcome === 'failed' || outcome === 'denied') return 'bad';
  return 'warn';
}

function actionClass(action: string): string {
  if (action === 'login.failed' || action.endsWith('.failed')) return styles.bad ?? '';
  if (action.startsWith('node.')) return styles.node ?? '';
  if (action.startsWith('lock.')) return styles.lock ?? '';
  return '';
}

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

  const [actorDraft, setActorDraft] = useState(actor);
  const [page, setPage] = useState(0);
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  const debounce = useRef<ReturnType<typeof setTimeout> | null>(null);
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

  const onActor = (value: string) => {
    setActorDraft(value);
    if (debounce.current) clearTimeout(debounce.current);
    debounce.current = setTimeout(() => setParam({ actor: value.trim() || null }), 350);
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
            Every node action, force-release and sign-in, written to every master and read back from all of them.
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

      <form
        className={styles.filters}
        role="search"
        aria-label="Filter the audit log"
        onSubmit={(e) => {
          e.preventDefault();
          setParam({ actor: actorDraft.trim() || null });
        }}
      >
        <label className={styles.field}>
          Actor
          <span className={styles.searchWrap}>
            <input
              type="search"
              value={actorDraft}
              onChange={(e) => onActor(e.target.value)}
              placeholder="exact user name"
              list="audit-actors"
              data-shortcut-search
              aria-keyshortcuts="/"
              autoComplete="off"
              spellCheck={false}
            />
            {actorDraft ? null : <kbd aria-hidden="true">/</kbd>}
          </span>
          <datalist id="audit-actors">
            {actors.map((a) => (
              <option key={a} value={a} />
            ))}
          </datalist>
        </label>
        <label className={styles.field}>
          Action
          <select value={action} onChange={(e) => setParam({ action: e.target.value || null })}>
            {ACTION_GROUPS.map((g) => (
              <optgroup key={g.label} label={g.label}>
                {g.options.map(([value, label]) => (
                  <option key={value || 'all'} value={value}>
                    {label}
                  </option>
                ))}
              </optgroup>
            ))}
          </select>
        </label>
        <label className={styles.field}>
          Since
          <select
            value={preset ? preset.value : 'custom'}
            onChange={(e) => setParam({ since: e.target.value === '24h' ? null : e.target.value })}
          >
            {SINCE_PRESETS.map((p) => (
              <option key={p.value} value={p.value}>
                {p.label}
              </option>
            ))}
            {preset ? null : <option value="custom">Since {absoluteSince ? new Date(absoluteSince).toLocaleString() : '…'}</option>}
          </select>
        </label>
        <label className={styles.field}>
          Limit
          <select
            value={limit}
            onChange={(e) => setParam({ limit: e.target.value === '500' ? null : e.target.value })}
            style={{ minWidth: 100 }}
          >
            {LIMITS.map((l) => (
              <option key={l} value={l}>
                {l.toLocaleString()}
              </option>
            ))}
          </select>
        </label>
        {actor || action || sinceParam !== '24h' || limit !== 500 ? (
          <button
            type="button"
            className="button button-ghost"
            onClick={() => {
              setActorDraft('');
              setParam({ actor: null, action: null, since: null, limit: null });
            }}
          >
            Clear filters
          </button>
        ) : null}
        <div className={styles.filterMeta} aria-live="polite">
          {data ? (
            <>
              <span data-testid="audit-count">
                {entries.length.toLocaleString()} entr{entries.length === 1 ? 'y' : 'ies'}
                {entries.length >= limit ? <span className={styles.warnText}> · limit reached, older ones not shown</span> : null}
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
      </form>

      <div
        className={styles.tableWrap}
        data-testid="audit-table"
        data-loading-state={state}
        role="region"
        aria-label="Audit entries"
        tabIndex={0}
      >
        <table className={styles.table}>
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

function EntryRow({ entry, open, onToggle }: { entry: AuditEntry; open: boolean; onToggle: () => void }) {
  const tone = outcomeTone(entry.outcome);
  const detailsId = `audit-detail-${entry.id}`;
  return (
    <tr
      className={`${styles.entry} ${open ? styles.open : ''}`}
      data-entry={entry.id}
      data-testid="audit-row"
      data-action={entry.action}
      tabIndex={0}
      onClick={onToggle}
      onKeyDown={(e) => {
        if ((e.key === 'Enter' || e.key === ' ') && e.target === e.currentTarget) {
          e.preventDefault();
          onToggle();
        }
      }}
    >
      <td>
        <When at={entry.at} />
      </td>
      <td>
        <span className={styles.actor}>
          <span className={styles.actorName} title={entry.actor}>
            {entry.actor}
          </span>
          <span className={styles.role}>{entry.role}</span>
        </span>
      </td>
      <td>
        <span className={`${styles.chip} ${actionClass(entry.action)}`} title={entry.action}>
          {entry.action}
        </span>
      </td>
      <td className="mono" title={entry.target}>
        {entry.target}
      </td>
      <td>
        <span className={`${styles.outcome} ${styles[tone]}`}>{entry.outcome}</span>
      </td>
      <td className={styles.reason} title={entry.reason || entry.detail}>
        {entry.reason ? (
          entry.reason
        ) : showDetail(entry.detail) ? (
          <span className={styles.detailText}>{showDetail(entry.detail)}</span>
        ) : (
          <span className={styles.detailText}>—</span>
        )}
      </td>
      <td>
        <button
          type="button"
          className={styles.toggle}
          aria-expanded={open}
          aria-controls={open ? detailsId : undefined}
          aria-label={`${open ? 'Hide' : 'Show'} details of ${entry.action} on ${entry.target}`}
          onClick={(e) => {
            e.stopPropagation();
            onToggle();
          }}
        >
          ›
        </button>
      </td>
    </tr>
  );
}

function DetailRow({ entry }: { entry: AuditEntry }) {
  return (
    <tr className={styles.detailRow} id={`audit-detail-${entry.id}`} data-testid="audit-detail">
      <td colSpan={7}>
        <div className={styles.detail}>
          <div>
            <h4 className={styles.detailTitle}>Entry</h4>
            <dl className={styles.detailMeta}>
              <dt>When</dt>
              <dd>{new Date(entry.at).toISOString()}</dd>
              <dt>Actor</dt>
              <dd>
                {entry.actor} ({entry.role})
              </dd>
              <dt>Action</dt>
              <dd className="mono">{entry.action}</dd>
              <dt>Target</dt>
              <dd className="mono">{entry.target}</dd>
              <dt>Outcome</dt>
              <dd>{entry.outcome}</dd>
              <dt>Reason</dt>
              <dd>{entry.reason || '—'}</dd>
              <dt>Detail</dt>
              <dd className="mono">{entry.detail || '—'}</dd>
              <dt>Id</dt>
              <dd className="mono">{entry.id}</dd>
            </dl>
          </div>
          <div>
            <h4 className={styles.detailTitle}>Before → after, per node</h4>
            <AuditDiff before={entry.before} after={entry.after} />
          </div>
        </div>
      </td>
    </tr>
  );
}

function When({ at }: { at: number }) {
  const now = useNow(1_000);
  const d = new Date(at);
  return (
    <span className={styles.time} title={d.toISOString()}>
      <span>{d.toLocaleTimeString([], { hour12: false })}</span>
      <span className={styles.timeAgo}>
        {d.toLocaleDateString([], { month: 'short', day: 'numeric' })} · {now ? `${formatAge(now - at)} ago` : ''}
      </span>
    </span>
  );
}
