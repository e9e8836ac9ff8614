'use client';

import { useState, type ReactNode } from 'react';
import type { NemesisReport } from '@/lib/api/chaos-report';
import styles from './chaos.module.css';
import { count, errorLabel, ms } from './format';
import { VerdictBadge } from './verdict-badge';

/** The figures that must stay 0 in a safe configuration, as the summary adds them up (and the details list them). */
const SAFETY: ReadonlyArray<{ key: keyof NemesisReport; label: string; title?: string }> = [
  { key: 'overlaps', label: 'Overlaps' },
  { key: 'fenceViolations', label: 'Fence violations' },
  {
    key: 'staleAcceptedFenced',
    label: 'Stale writes fenced',
    title: "accepted writes of an older holder after a newer holder's, fenced register",
  },
  { key: 'leakedKeys', label: 'Leaked keys' },
  { key: 'foreignDeletes', label: 'Foreign deletes' },
  { key: 'expiredGrants', label: 'Expired grants' },
  { key: 'lateExtends', label: 'Late extends', title: 'extends accepted although made after the validity they extended had ended' },
  {
    key: 'leftovers',
    label: 'Leftovers',
    title: 'keys a rejected acquire or a released lock left on a node that answered it, read while they would still be live',
  },
];

/** The report's own count of safety violations (chaos/harness/analyze.ts), and which figures make it up, in words. */
function safetyOf(n: NemesisReport): { total: number; named: string } {
  const hit = SAFETY.filter((s) => (n[s.key] as number) > 0);
  return { total: n.violations, named: hit.map((s) => `${count(n[s.key] as number)} ${s.label.toLowerCase()}`).join(', ') };
}

const COLUMNS = 6;

/**
 * One summary row per nemesis — acquisitions, failed acquires, safety violations (every figure that
 * must stay 0, added up), latency, verdict — with its every figure behind a disclosure: twenty
 * nemeses of sixteen figures each made a page 6,683 px tall at 1280 and 16,754 px at 390. The
 * summary is a table row from 700 px up and a small card below; "Open all" unfolds every one.
 */
export function NemesisTable({ rows, target }: { rows: readonly NemesisReport[]; target: number }) {
  const [open, setOpen] = useState<ReadonlySet<string>>(() => new Set());
  const all = rows.length > 0 && rows.every((n) => open.has(n.nemesis));
  const toggle = (name: string) =>
    setOpen((before) => {
      const next = new Set(before);
      if (!next.delete(name)) next.add(name);
      return next;
    });
  return (
    <>
      <div className={styles.foldBar}>
        <span className={styles.sectionNote}>
          Each nemesis in summary; open one for every figure ({open.size} of {rows.length} open).
        </span>
        <button
          type="button"
          className="button button-ghost"
          onClick={() => setOpen(all ? new Set() : new Set(rows.map((n) => n.nemesis)))}
          data-testid="chaos-nemeses-all"
        >
          {all ? 'Fold all' : 'Open all'}
        </button>
      </div>
      <div className={styles.tableWrap} role="region" aria-label="Nemeses" tabIndex={0}>
        <table className={`${styles.table} ${styles.foldTable}`} data-testid="chaos-nemeses">
          <thead>
            <tr>
              <th scope="col">Nemesis</th>
              <th scope="col" className={styles.num}>
                Acquisitions
              </th>
              <th scope="col" className={styles.num}>
                Failed acquires
              </th>
              <th
                scope="col"
                className={styles.num}
                title="every figure that must stay 0, added up: overlaps, fence violations, stale fenced writes, leaked keys…"
              >
                Safety violations
              </th>
              <th scope="col" className={styles.num}>
                Acquire p50 / p99 ms
              </th>
              <th scope="col">Result</th>
            </tr>
          </thead>
          {rows.map((n) => (
            <NemesisRows key={n.nemesis} n={n} target={target} open={open.has(n.nemesis)} onToggle={() => toggle(n.nemesis)} />
          ))}
        </table>
      </div>
    </>
  );
}

function NemesisRows({ n, target, open, onToggle }: { n: NemesisReport; target: number; open: boolean; onToggle: () => void }) {
  const safety = safetyOf(n);
  const detailId = `chaos-nemesis-${n.nemesis}`;
  return (
    <tbody data-nemesis={n.nemesis} data-open={open}>
      <tr className={styles.summaryRow}>
        <th scope="row">
          <button
            type="button"
            className={styles.disclosure}
            aria-expanded={open}
            aria-controls={detailId}
            onClick={onToggle}
            title={n.title}
            data-testid="chaos-nemesis-toggle"
          >
            <span className={styles.chevron} aria-hidden="true">
              ▸
            </span>
            {n.nemesis}
          </button>{' '}
          <span className={styles.path}>{n.network}</span>
        </th>
        <td className={styles.num} data-label="Acquisitions">
          {count(n.successes)}
          {n.shortfall ? <span className={`${styles.sub} ${styles.warning}`}>short of {count(target)}</span> : null}
        </td>
        <td className={`${styles.num} ${n.failures === 0 ? styles.zero : ''}`} data-label="Failed">
          {count(n.failures)}
        </td>
        <td
          className={`${styles.num} ${safety.total === 0 ? styles.zero : styles.hot}`}
          data-label="Violations"
          title={safety.total === 0 ? 'none of the figures that must stay 0 is above it' : safety.named}
        >
          {count(safety.total)}
        </td>
        <td className={`${styles.num} ${styles.latency}`} data-label="p50 / p99 ms">
          {ms(n.p50Ms)} / {ms(n.p99Ms)}
        </td>
        <td className={styles.result}>
          <VerdictBadge passed={n.passed} warn={n.shortfall} />
        </td>
      </tr>
      <tr id={detailId} className={styles.detailRow} hidden={!open}>
        <td colSpan={COLUMNS}>{open ? <NemesisDetail n={n} target={target} /> : null}</td>
      </tr>
    </tbody>
  );
}

function Figure({ label, title, tone, children }: { label: string; title?: string; tone?: string; children: ReactNode }) {
  return (
    <div className={styles.figure}>
      <dt title={title}>{label}</dt>
      <dd className={tone}>{children}</dd>
    </div>
  );
}

/** Every figure of one nemesis: what it did, the safety checks one by one, what fencing caught, cost and liveness. */
function NemesisDetail({ n, target }: { n: NemesisReport; target: number }) {
  const classes = Object.entries(n.failuresByClass).sort((a, b) => b[1] - a[1]);
  return (
    <div className={styles.detail} data-testid="chaos-nemesis-detail">
      <p className={styles.detailLead}>
        {n.title} · {n.cycles} fault cycles, {ms(n.durationMs / 1000, 1)} s
      </p>
      {n.targeted ? (
        <p className={`${styles.detailLead} ${n.targeted.defended < n.targeted.trials ? styles.hot : ''}`} title={n.targeted.expectation}>
          targeted: danger in place in {n.targeted.armed} of {n.targeted.trials} trials, defence seen in {n.targeted.defended}
        </p>
      ) : null}
      <dl className={styles.figures}>
        <Figure label="Acquisitions">
          {count(n.successes)}
          <span className={styles.sub}>{count(n.successesUnderFault)} under fault</span>
          {n.shortfall ? <span className={`${styles.sub} ${styles.warning}`}>short of {count(target)}</span> : null}
        </Figure>
        {n.liveness ? (
          <Figure
            label="Liveness"
            title="a quorum stayed reachable: no acquire may fail for unavailability, and throughput may not collapse"
            tone={n.liveness.passed ? undefined : styles.hot}
          >
            {n.liveness.passed ? 'ok' : 'FAILED'}
            <span className={styles.sub}>
              {count(n.liveness.unavailable)} unavailable, {count(Math.round(n.liveness.ratePerS))}/s
            </span>
          </Figure>
        ) : null}
        {SAFETY.map((s) => {
          const value = n[s.key] as number;
          return (
            <Figure key={s.key} label={s.label} title={s.title} tone={value === 0 ? styles.zero : styles.hot}>
              {count(value)}
            </Figure>
          );
        })}
        <Figure
          label="Stale writes unfenced"
          title="accepted writes of an older holder on the unfenced register: what fencing prevents"
          tone={n.staleAcceptedUnfenced > 0 ? styles.expected : styles.zero}
        >
          {count(n.staleAcceptedUnfenced)}
        </Figure>
        <Figure label="Refused by fence" tone={n.rejectedFenced > 0 ? undefined : styles.zero}>
          {count(n.rejectedFenced)}
        </Figure>
        <Figure label="Acquire p50 / p99 ms">
          {ms(n.p50Ms)} / {ms(n.p99Ms)}
        </Figure>
        <Figure label="Commands / acquisition">
          {n.costApproximate ? '≥ ' : ''}
          {ms(n.commandsPerAcquisition)}
          <span className={styles.sub}>{ms(n.scriptCallsPerAcquisition)} script calls</span>
        </Figure>
        <Figure label="Failures by class">
          {classes.length === 0 ? (
            <span className={styles.zero}>—</span>
          ) : (
            <span className={styles.classes}>
              {classes.map(([name, c]) => (
                <span key={name} className={styles.classChip}>
                  {errorLabel(name)} {count(c)}
                </span>
              ))}
            </span>
          )}
        </Figure>
      </dl>
    </div>
  );
}
