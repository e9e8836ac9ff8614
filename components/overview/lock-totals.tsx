'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import type { CSSProperties } from 'react';
import { useConnectionHealth } from '@/lib/client/connection-health';
import { isStale } from '@/lib/client/freshness';
import { nodeList } from '@/lib/client/masters-reading';
import { LOCKS_SUMMARY_POLL_MS, locksSummaryQuery } from '@/lib/client/ops-queries';
import { formatClock } from '../locks/format';
import { STATE_ORDER, stateColor, type LockStateName } from '../locks/lock-state';
import { ReadAge, skewMs, useNow } from '../ui/clock';
import styles from './overview.module.css';
import { toneColor } from '../ui/palette';

/** One tile per lock state, in the states' order (a record: a new state is a compile error here). */
const TILE: Record<LockStateName, { label: string; hint: string; alarm?: true }> = {
  held: { label: 'Held', hint: 'a majority holds one token' },
  expiring: { label: 'Expiring', hint: 'majority, validity ≤ 2 s' },
  partial: { label: 'Partial', hint: 'on fewer than a quorum', alarm: true },
  split: { label: 'Split', hint: 'tokens disagree, no majority', alarm: true },
};
const TILES = STATE_ORDER.map((state) => ({ state, ...TILE[state] }));

/** Totals of locks by state, from the lock list's snapshot (the same scan the Locks screen pages through). */
export function LockTotals() {
  const { data, error, isPending, dataUpdatedAt } = useQuery(locksSummaryQuery());
  const skew = data ? skewMs(data.readAt, dataUpdatedAt) : 0;
  const unreadIds = data ? data.nodes.filter((n) => !n.ok).map((n) => n.node) : [];
  const unread = unreadIds.length;
  const health = useConnectionHealth();
  const now = useNow(500);
  // "0" is a reading: it needs nodes that answered, fresh. Counts from no node are unknown ("—"),
  // counts from some nodes are lower bounds ("≥"), counts of a stale reading are greyed and say so.
  const blind = data !== undefined && unread === data.nodes.length;
  const stale = data !== undefined && (health.failing || isStale(dataUpdatedAt, now, LOCKS_SUMMARY_POLL_MS));
  const knowledge = !data ? 'pending' : blind ? 'unknown' : stale ? 'stale' : unread ? 'partial' : 'read';
  const shown = (count: number) => (blind ? '—' : unread ? `≥ ${count.toLocaleString()}` : count.toLocaleString());
  return (
    <section
      aria-labelledby="lock-totals-title"
      data-testid="lock-totals"
      data-loading-state={isPending ? 'loading' : data ? 'ready' : 'empty'}
      data-knowledge={knowledge}
    >
      <div className={styles.sectionHead}>
        <h2 className={styles.sectionTitle} id="lock-totals-title">
          Locks by state
        </h2>
        <div className={styles.sectionMeta}>
          {error ? (
            <span style={{ color: toneColor('bad') }} role="alert">
              refresh failed: {error.message}
            </span>
          ) : null}
          {data ? (
            <span>
              {data.index ? 'live index' : 'scan'} {Math.round(data.scanMs)} ms
            </span>
          ) : null}
          <ReadAge at={data ? data.readAt + skew : null} />
          <Link href="/locks">Open the matrix →</Link>
        </div>
      </div>
      {knowledge === 'unknown' || knowledge === 'partial' || knowledge === 'stale' ? (
        <p
          className={`callout ${knowledge === 'partial' ? 'callout-warn' : ''} ${styles.totalsNote}`}
          role="status"
          data-testid="lock-totals-unknown"
        >
          {knowledge === 'unknown' ? (
            <>
              <strong>Lock counts unknown:</strong> {nodeList(unreadIds)} could not be read ({data!.nodes[0]?.error ?? 'no answer'}). No
              count below is a zero.
            </>
          ) : knowledge === 'stale' ? (
            <>
              <strong>Lock counts are stale:</strong> {health.failing ? 'the console is not answering' : 'not refreshed'} since the reading
              at {formatClock(data!.readAt + skew)}.
            </>
          ) : (
            <>
              <strong>{nodeList(unreadIds)} could not be read:</strong> counts are from the {data!.nodes.length - unread} that answered, so
              each is a lower bound.
            </>
          )}
        </p>
      ) : null}
      <div className={`${styles.totals} ${knowledge === 'unknown' || knowledge === 'stale' ? styles.totalsUnknown : ''}`}>
        <div className={styles.total} data-testid="lock-total-all">
          <span className={styles.totalLabel}>All locks</span>
          <span className={styles.totalValue}>
            {data ? (
              <span data-testid="lock-total-all-value">{shown(data.total)}</span>
            ) : (
              <span className={styles.skeleton} style={{ display: 'inline-block', width: 48, height: 24 }} />
            )}
          </span>
          <span className={styles.totalHint}>keys seen on any node</span>
        </div>
        {TILES.map((t) => {
          const count = data?.stateCounts[t.state] ?? 0;
          const alarm = 'alarm' in t && count > 0 && !blind;
          return (
            <Link
              key={t.state}
              href={`/locks?state=${t.state}`}
              className={`${styles.total} ${alarm ? styles.alarm : ''}`}
              style={alarm ? ({ '--tone': stateColor(t.state) } as CSSProperties) : undefined}
              data-testid={`lock-total-${t.state}`}
              title={`${t.label}: show them in the Locks matrix`}
            >
              <span className={styles.totalLabel}>
                <span className={styles.swatch} style={{ background: stateColor(t.state) }} />
                {t.label}
              </span>
              <span className={styles.totalValue} data-testid={`lock-total-${t.state}-value`}>
                {data ? shown(count) : <span className={styles.skeleton} style={{ display: 'inline-block', width: 36, height: 24 }} />}
              </span>
              <span className={styles.totalHint}>{t.hint}</span>
            </Link>
          );
        })}
      </div>
      {/* Always there, counts pending while loading: the line must not push the masters down when it lands. */}
      <LockFlags noTtl={blind ? undefined : data?.flagCounts.noTtl} overCeiling={blind ? undefined : data?.flagCounts.overCeiling} />
    </section>
  );
}

/**
 * Locks that need a look whatever their state: a key that never expires (nobody can take the lock
 * again until an operator releases it) and a lease above the cluster's ceiling (written by a client
 * that does not keep it: the quarantine after a restart, sized by the ceiling, does not cover it).
 */
function LockFlags({ noTtl, overCeiling }: { noTtl?: number; overCeiling?: number }) {
  const flag = (count: number | undefined, text: string, testId: string) =>
    count === undefined ? (
      <span className={styles.flagOff} data-testid={testId}>
        <span className={styles.skeleton} style={{ display: 'inline-block', width: 12, height: '1em', verticalAlign: 'middle' }} /> locks{' '}
        {text}
      </span>
    ) : (
      <span className={count > 0 ? styles.flagOn : styles.flagOff} data-testid={testId} data-count={count}>
        <strong>{count.toLocaleString()}</strong> lock{count === 1 ? '' : 's'} {text}
      </span>
    );
  return (
    <p className={styles.flags}>
      {flag(noTtl, 'with a key that never expires', 'lock-flag-no-ttl')}
      {flag(overCeiling, 'with a lease above the ceiling', 'lock-flag-over-ceiling')}
    </p>
  );
}
