'use client';

import { keepPreviousData, useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useState } from 'react';
import { LOCK_SERVICE_LOG_LIMITS } from '@/lib/api/lock-history';
import { lockServiceLogQuery } from '@/lib/client/queries';
import { OlderEntries } from './older-entries';
import { formatDate, formatDateTime, formatTime } from '../ui/format';
import styles from './audit.module.css';

/** "02:10:14" over "2026-11-27", as the audit log above shows its times (the offset in the title). */
function When({ at }: { at: number }) {
  return (
    <time dateTime={new Date(at).toISOString()} title={formatDateTime(at)}>
      {formatTime(at)}
      <span className="muted small" style={{ display: 'block' }}>
        {formatDate(at)}
      </span>
    </time>
  );
}

/**
 * The lock service's side of the audit: every grant, extend, release and force-release,
 * newest first, with the principal the console authenticated; narrowed to one API key (or user)
 * by its principal, e.g. `client:billing`. Each resource links to its lock detail and history.
 */
export function LockServiceLog() {
  const [draft, setDraft] = useState('');
  const [principal, setPrincipal] = useState('');
  const [limit, setLimit] = useState<number>(LOCK_SERVICE_LOG_LIMITS[0]);
  const { data, error, isPending } = useQuery({ ...lockServiceLogQuery(principal, limit), placeholderData: keepPreviousData });
  const state = isPending ? 'loading' : error ? 'error' : 'ready';
  return (
    <section aria-labelledby="lock-service-title" data-testid="lock-service-log" style={{ marginTop: 32 }}>
      <div className={styles.header}>
        <div>
          <h2 id="lock-service-title" className={styles.title}>
            Lock service
          </h2>
          <p className={styles.subtitle}>Grants, extends, releases and force-releases, by who authenticated: an API key or a user.</p>
        </div>
      </div>
      <form
        className={styles.filters}
        role="search"
        aria-label="Filter the lock service's log"
        onSubmit={(e) => {
          e.preventDefault();
          setPrincipal(draft.trim());
          setLimit(LOCK_SERVICE_LOG_LIMITS[0]);
        }}
      >
        <label className={styles.field}>
          Key or user
          <input
            type="search"
            value={draft}
            onChange={(e) => setDraft(e.target.value)}
            placeholder="client:billing, operator:alice"
            autoComplete="off"
            spellCheck={false}
          />
        </label>
        <button type="submit" className="button">
          Filter
        </button>
      </form>
      {data ? (
        <p className={styles.filterMeta} aria-live="polite" data-testid="lock-service-count">
          <span>
            {data.entries.length.toLocaleString()} entr{data.entries.length === 1 ? 'y' : 'ies'}
            {data.entries.length >= limit ? <OlderEntries limit={limit} onMore={setLimit} limits={LOCK_SERVICE_LOG_LIMITS} /> : null}
          </span>
        </p>
      ) : null}
      <div className={styles.tableWrap} data-loading-state={state} role="region" aria-label="Lock service entries" tabIndex={0}>
        <table className={`${styles.table} ${styles.stacked}`}>
          <caption className="visually-hidden">Lock service entries, newest first</caption>
          <thead>
            <tr>
              <th scope="col" className={styles.colTime}>
                Time
              </th>
              <th scope="col" className={styles.colAction}>
                Event
              </th>
              <th scope="col" className={styles.colActor}>
                Key or user
              </th>
              <th scope="col" className={styles.colTarget}>
                Resource
              </th>
              <th scope="col">Fence · detail</th>
            </tr>
          </thead>
          <tbody>
            {error ? (
              <tr>
                <td colSpan={5} className={styles.empty} role="alert">
                  The lock service&apos;s log could not be read: {error.message}
                </td>
              </tr>
            ) : isPending ? (
              <tr>
                <td colSpan={5} className={styles.empty}>
                  Reading the masters…
                </td>
              </tr>
            ) : data.entries.length === 0 ? (
              <tr>
                <td colSpan={5} className={styles.empty}>
                  {principal ? `Nothing recorded for ${principal}.` : 'No lock taken through the console yet.'}
                </td>
              </tr>
            ) : (
              data.entries.map((e) => (
                <tr key={e.id} data-testid="lock-service-entry" data-event={e.event}>
                  <td data-label="Time">
                    <When at={e.at} />
                  </td>
                  <td data-label="Event">{e.event}</td>
                  <td data-label="Key or user" className={styles.stackWide}>
                    {e.principal}
                  </td>
                  <td data-label="Resource" className={styles.stackWide}>
                    {e.resources.map((r, i) => (
                      <span key={r}>
                        {i > 0 ? ', ' : null}
                        <Link href={`/locks/${encodeURIComponent(r)}`} title={r}>
                          {r}
                        </Link>
                      </span>
                    ))}
                  </td>
                  <td data-label="Fence · detail" className={styles.stackWide}>
                    {e.fence !== null ? `fence ${e.fence}` : null}
                    {e.fence !== null && e.detail ? ' · ' : null}
                    {e.detail}
                  </td>
                </tr>
              ))
            )}
          </tbody>
        </table>
      </div>
    </section>
  );
}
