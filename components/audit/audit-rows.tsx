'use client';

import { AUDIT_INCOMPLETE, AUDIT_INCOMPLETE_HINT, type AuditEntry, type AuditVia } from '@/lib/api/audit';
import { formatAge, useNow } from '../ui/clock';
import { formatDate, formatDateTime, formatTime } from '../ui/format';
import { AuditDiff } from './audit-diff';
import { showDetail } from './audit-fields';
import { MiddleText } from '../ui/middle-text';
import styles from './audit.module.css';

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

/** "scenario 2 (minority-failure), run 5a13dc45b860, started by this actor". */
function viaText(via: AuditVia): string {
  return `scenario ${via.scenario} (${via.scenarioId}), run ${via.runId}, started by this actor`;
}

/** One entry of the audit log: a row that opens its detail (click, Enter or Space). */
export function EntryRow({ entry, open, onToggle }: { entry: AuditEntry; open: boolean; onToggle: () => void }) {
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
        {entry.via ? (
          <span className={styles.sub} data-testid="audit-via" title={viaText(entry.via)}>
            by scenario {entry.via.scenario} · run {entry.via.runId.slice(0, 6)}
          </span>
        ) : null}
      </td>
      <td>
        <span className={`${styles.chip} ${actionClass(entry.action)}`} title={entry.action}>
          {entry.action}
        </span>
      </td>
      <td className={`mono ${styles.target}`} title={entry.holder ? `${entry.target} — held by ${entry.holder}` : entry.target}>
        {/* Cut in its middle, never at its end (its title, and the detail row Enter opens, show it whole). */}
        <MiddleText text={entry.target} title={null} className={styles.targetName} />
        {entry.holder ? (
          <span className={`${styles.sub} ${styles.holderLine}`} data-testid="audit-holder">
            held by <MiddleText text={entry.holder} title={null} />
          </span>
        ) : null}
      </td>
      <td>
        {entry.outcome === AUDIT_INCOMPLETE ? (
          <span className={`${styles.chip} ${styles.bad}`} data-testid="audit-incomplete" title={AUDIT_INCOMPLETE_HINT}>
            incomplete
          </span>
        ) : (
          <span className={`${styles.outcome} ${styles[tone]}`}>{entry.outcome}</span>
        )}
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

/** The opened entry: every field, and its before → after per node. */
export function DetailRow({ entry }: { entry: AuditEntry }) {
  return (
    <tr className={styles.detailRow} id={`audit-detail-${entry.id}`} data-testid="audit-detail">
      <td colSpan={7}>
        <div className={styles.detail}>
          <div>
            <h2 className={styles.detailTitle}>Entry</h2>
            <dl className={styles.detailMeta}>
              <dt>When</dt>
              <dd>
                <time dateTime={new Date(entry.at).toISOString()}>{formatDateTime(entry.at)}</time>
              </dd>
              <dt>Actor</dt>
              <dd>
                {entry.actor} ({entry.role})
              </dd>
              {entry.via ? (
                <>
                  <dt>Done by</dt>
                  <dd>{viaText(entry.via)}</dd>
                </>
              ) : null}
              <dt>Action</dt>
              <dd className="mono">{entry.action}</dd>
              <dt>Target</dt>
              <dd className="mono">{entry.target}</dd>
              <dt>Outcome</dt>
              <dd>{entry.outcome === AUDIT_INCOMPLETE ? `incomplete: ${AUDIT_INCOMPLETE_HINT}` : entry.outcome}</dd>
              {entry.holder ? (
                <>
                  <dt>Holder hit</dt>
                  <dd className="mono">{entry.holder}</dd>
                </>
              ) : null}
              <dt>Reason</dt>
              <dd>{entry.reason || '—'}</dd>
              <dt>Detail</dt>
              <dd className="mono">{entry.detail || '—'}</dd>
              <dt>Id</dt>
              <dd className="mono">{entry.id}</dd>
            </dl>
          </div>
          <div>
            <h2 className={styles.detailTitle}>Before → after, per node</h2>
            <AuditDiff before={entry.before} after={entry.after} />
          </div>
        </div>
      </td>
    </tr>
  );
}

/** The time column: "04:31:21" over "2026-11-27 · 3m ago"; the full date, time and offset in its title. */
function When({ at }: { at: number }) {
  const now = useNow(1_000);
  return (
    <time className={styles.time} dateTime={new Date(at).toISOString()} title={formatDateTime(at)}>
      <span>{formatTime(at)}</span>
      <span className={styles.timeAgo}>
        {formatDate(at)} · {now ? `${formatAge(now - at)} ago` : ''}
      </span>
    </time>
  );
}
