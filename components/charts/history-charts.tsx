'use client';

import { useQuery } from '@tanstack/react-query';
import { useId, useMemo, useState, type ReactNode } from 'react';
import { Area, Bar, CartesianGrid, ComposedChart, Line, LineChart, Tooltip, XAxis, YAxis, type TooltipContentProps } from 'recharts';
import { historyQuery, type HistoryBucket } from '@/lib/client/queries';
import {
  clockLabel,
  grantKnowledge,
  grantSeries,
  latencySeries,
  lockCountSeries,
  outcomeBinMs,
  outcomeSeries,
  rttSeries,
  tickLabel,
  timeTicks,
  windowOf,
  type TimeWindow,
} from './series';
import { STATE_ORDER, stateColor } from '../locks/lock-state';
import { nodeSeriesColor, toneColor } from '../ui/palette';
import { HISTORY_TIERS } from '@/lib/api/history';
import styles from './charts.module.css';

export type LoadingState = 'loading' | 'ready' | 'empty' | 'error';

/** The windows the picker offers; the last three read the server's one-minute buckets. */
const WINDOWS = [
  { label: '1 min', ms: 60_000, resolution: '1s' },
  { label: '5 min', ms: 300_000, resolution: '1s' },
  { label: '10 min', ms: 600_000, resolution: '1s' },
  { label: '1 h', ms: 3_600_000, resolution: '1m' },
  { label: '6 h', ms: 21_600_000, resolution: '1m' },
  { label: '24 h', ms: 86_400_000, resolution: '1m' },
] as const;

/** Lock states in the chart, bottom to top, in the colours every other screen gives them. */
export const STATE_SERIES = STATE_ORDER.map((key) => ({ key, label: key, color: stateColor(key) }));

const nodeColor = nodeSeriesColor;
const fmtMs = (v: number) => (v < 1 ? v.toFixed(2) : v < 10 ? v.toFixed(1) : Math.round(v).toString());
/** Axis ticks: "0", "2.5 ms", "750 ms", "1.2 s" — short enough for a 56 px axis. */
const axisMs = (v: number) => (v === 0 ? '0' : v >= 1_000 ? `${+(v / 1000).toFixed(1)} s` : `${+v.toFixed(v < 1 ? 2 : 1)} ms`);
const Y_AXIS = { width: 56, tickLine: false, axisLine: false } as const;
const MARGIN = { top: 6, right: 8, bottom: 0, left: 0 };

/**
 * The overview's charts, from the server's rolling window (1 s buckets, 10 minutes). Each chart
 * carries `data-loading-state` (loading | ready | empty | error) so tests wait on state, not time.
 */
export function HistoryCharts({ nodeCount }: { nodeCount: number }) {
  const [span, setSpan] = useState<number>(300_000);
  const resolution = WINDOWS.find((o) => o.ms === span)?.resolution ?? '1s';
  const bucketMs = HISTORY_TIERS[resolution].bucketMs;
  const { data, error, isPending, dataUpdatedAt } = useQuery(historyQuery(resolution));
  const buckets: readonly HistoryBucket[] = useMemo(() => data?.buckets ?? [], [data]);
  const w = useMemo(() => windowOf(buckets, span, dataUpdatedAt, bucketMs), [buckets, span, dataUpdatedAt, bucketMs]);
  const base: LoadingState = isPending ? 'loading' : data ? 'ready' : error ? 'error' : 'empty';
  const errorText = !data && error ? error.message : null;

  const latency = useMemo(() => latencySeries(buckets, w), [buckets, w]);
  const binMs = outcomeBinMs(w);
  const grantPoints = useMemo(() => grantSeries(buckets, w, binMs), [buckets, w, binMs]);
  const outcomes = useMemo(() => {
    const seen = new Map(grantPoints.map((p) => [p.t, p.seen]));
    return outcomeSeries(buckets, w, binMs).map((p) => ({ ...p, seen: seen.get(p.t) ?? null }));
  }, [buckets, w, binMs, grantPoints]);
  const knowledge = grantKnowledge(grantPoints);
  const grants = data?.grants;
  const rtt = useMemo(() => rttSeries(buckets, w, nodeCount), [buckets, w, nodeCount]);
  const locks = useMemo(() => lockCountSeries(buckets, w), [buckets, w]);

  const state = (has: boolean): LoadingState => (base !== 'ready' ? base : has ? 'ready' : 'empty');
  const latencyState = state(latency.some((p) => p.p50 !== null));
  const outcomeState = state(outcomes.some((p) => (p.ok ?? 0) + (p.failed ?? 0) + (p.seen ?? 0) > 0));
  const seenSum = outcomes.reduce((s, p) => s + (p.seen ?? 0), 0);
  const rttState = state(rtt.some((p) => Object.entries(p).some(([k, v]) => k !== 't' && v !== null)));
  const lockState = state(locks.some((p) => p.total !== null));

  const lastLatency = [...latency].reverse().find((p) => p.p99 !== null);
  const okSum = outcomes.reduce((s, p) => s + (p.ok ?? 0), 0);
  const failSum = outcomes.reduce((s, p) => s + (p.failed ?? 0), 0);
  const lastRtt = [...rtt].reverse().find((p) => p[`n1`] !== undefined && Object.entries(p).some(([k, v]) => k !== 't' && v !== null));
  const maxRtt = lastRtt
    ? Math.max(
        ...Object.entries(lastRtt)
          .filter(([k, v]) => k !== 't' && v !== null)
          .map(([, v]) => v as number),
      )
    : null;
  const lastLocks = [...locks].reverse().find((p) => p.total !== null);
  const ticks = timeTicks(w);

  return (
    <section aria-labelledby="activity-title" className={styles.palette}>
      <div className={styles.sectionHead}>
        <h2 id="activity-title" className={styles.sectionTitle}>
          Activity
        </h2>
        <div className={styles.sectionMeta}>
          <span data-testid="history-resolution">
            {resolution === '1s' ? '1 s buckets, kept 10 min' : '1 min buckets, kept 24 h'} on the console server, read every 5 s even when
            no screen is open
          </span>
          <div className={styles.windowPicker} role="group" aria-label="Time window">
            {WINDOWS.map((o) => (
              <button key={o.ms} type="button" aria-pressed={span === o.ms} onClick={() => setSpan(o.ms)}>
                {o.label}
              </button>
            ))}
          </div>
        </div>
      </div>
      <div className={styles.grid}>
        <ChartCard
          testId="chart-latency"
          state={latencyState}
          errorText={errorText}
          title="Acquire latency"
          subtitle={`p50 and p99 per ${resolution === '1s' ? 'second' : 'minute'}, from the lock core's own timings`}
          stat={lastLatency ? { value: `${fmtMs(lastLatency.p99!)} ms`, label: 'latest p99' } : null}
          legend={[
            { label: 'p50', color: 'var(--p50)' },
            { label: 'p99', color: 'var(--p99)' },
          ]}
          empty={{
            title: 'No acquires through this console in this window',
            hint: 'Its lock core times its own acquires; locks other clients take are in Grants on the masters.',
          }}
        >
          <LineChart data={latency} responsive style={{ width: '100%', height: '100%' }} margin={MARGIN}>
            <CartesianGrid vertical={false} strokeDasharray="3 3" />
            <TimeAxis w={w} ticks={ticks} />
            <YAxis {...Y_AXIS} tickFormatter={axisMs} />
            <Tooltip content={(p) => <TimeTooltip {...p} unit="ms" />} isAnimationActive={false} />
            <Line
              dataKey="p50"
              name="p50"
              stroke="var(--p50)"
              strokeWidth={2}
              dot={latency.length < 60 ? { r: 2.5, fill: 'var(--p50)', strokeWidth: 0 } : false}
              isAnimationActive={false}
              connectNulls={false}
            />
            <Line
              dataKey="p99"
              name="p99"
              stroke="var(--p99)"
              strokeWidth={2}
              strokeDasharray="5 3"
              dot={latency.length < 60 ? { r: 2.5, fill: 'var(--p99)', strokeWidth: 0 } : false}
              isAnimationActive={false}
              connectNulls={false}
            />
          </LineChart>
        </ChartCard>

        <ChartCard
          testId="chart-outcomes"
          state={outcomeState}
          errorText={errorText}
          title="Grants on the masters"
          subtitle={`locks taken by any client, seen on the masters (line), and this console's own acquires, granted vs failed (bars), per ${binMs < 60_000 ? `${binMs / 1000} s` : `${binMs / 60_000} min`}`}
          stat={
            outcomeState === 'ready'
              ? {
                  // Some of the window unread: what was seen is a floor, not the count.
                  value: `${knowledge.unread > 0 ? '≥ ' : ''}${seenSum.toLocaleString()} · ${okSum.toLocaleString()} / ${failSum.toLocaleString()}`,
                  label: 'seen · console granted / failed',
                }
              : null
          }
          legend={[
            { label: 'seen on the masters', color: 'var(--p50)' },
            { label: 'console granted', color: toneColor('ok'), box: true },
            { label: 'console failed', color: toneColor('bad'), box: true },
          ]}
          knowledge={knowledge.unread === 0 ? 'known' : knowledge.known === 0 ? 'unknown' : 'partial'}
          empty={
            grants && !grants.counting
              ? {
                  title: 'Grants on the masters are not counted yet',
                  hint: 'The console subscribes to the masters when it starts; acquires through it are counted here meanwhile.',
                }
              : knowledge.unread > 0 && knowledge.known === 0
                ? {
                    title: 'Grants on the masters could not be read in this window',
                    hint: 'No master answered the console: locks taken meanwhile are unknown, not none.',
                  }
                : knowledge.unread > 0
                  ? {
                      title: 'No grants seen while the masters could be read',
                      hint: 'For part of this window no master answered: grants then are unknown, not none.',
                    }
                  : { title: 'No grants in this window', hint: 'Every lock taken on the masters, by any client, is counted here.' }
          }
          note={grants?.note ? `Incomplete: ${grants.note}.` : undefined}
        >
          <ComposedChart
            data={outcomes}
            responsive
            style={{ width: '100%', height: '100%' }}
            margin={MARGIN}
            barCategoryGap={binMs > 1_000 ? 1 : 0}
          >
            <CartesianGrid vertical={false} strokeDasharray="3 3" />
            <XAxis dataKey="t" ticks={ticks} tickFormatter={tickLabel} interval="preserveStartEnd" tickLine={false} minTickGap={24} />
            <YAxis {...Y_AXIS} allowDecimals={false} />
            <Tooltip content={(p) => <TimeTooltip {...p} unit={`/ ${binMs / 1000} s`} />} isAnimationActive={false} />
            <Bar dataKey="ok" name="console granted" stackId="o" fill={toneColor('ok')} isAnimationActive={false} />
            <Bar dataKey="failed" name="console failed" stackId="o" fill={toneColor('bad')} isAnimationActive={false} />
            <Line
              dataKey="seen"
              name="seen on the masters"
              stroke="var(--p50)"
              strokeWidth={2}
              dot={false}
              type="stepAfter"
              isAnimationActive={false}
              connectNulls={false}
            />
          </ComposedChart>
        </ChartCard>

        <ChartCard
          testId="chart-rtt"
          state={rttState}
          errorText={errorText}
          title="Round-trip time per node"
          subtitle="PING through the path lock clients use, as the console read it"
          stat={maxRtt !== null ? { value: `${fmtMs(maxRtt)} ms`, label: 'slowest node now' } : null}
          legend={Array.from({ length: nodeCount }, (_, i) => ({ label: `node ${i + 1}`, color: nodeColor(i + 1) }))}
          empty={{ title: 'No node readings yet', hint: 'RTT is recorded each time the console reads the nodes.' }}
        >
          <LineChart data={rtt} responsive style={{ width: '100%', height: '100%' }} margin={MARGIN}>
            <CartesianGrid vertical={false} strokeDasharray="3 3" />
            <TimeAxis w={w} ticks={ticks} />
            <YAxis {...Y_AXIS} tickFormatter={axisMs} />
            <Tooltip content={(p) => <TimeTooltip {...p} unit="ms" />} isAnimationActive={false} />
            {Array.from({ length: nodeCount }, (_, i) => (
              <Line
                key={i}
                dataKey={`n${i + 1}`}
                name={`node ${i + 1}`}
                stroke={nodeColor(i + 1)}
                strokeWidth={1.6}
                dot={false}
                isAnimationActive={false}
                connectNulls={false}
              />
            ))}
          </LineChart>
        </ChartCard>

        <ChartCard
          testId="chart-locks"
          state={lockState}
          errorText={errorText}
          title="Locks over time"
          subtitle="keys by quorum state, from the console's scans"
          stat={lastLocks ? { value: (lastLocks.total ?? 0).toLocaleString(), label: 'locks at last scan' } : null}
          legend={[...STATE_SERIES.map((s) => ({ label: s.label, color: s.color, box: true })), { label: 'total', color: 'var(--text)' }]}
          empty={{ title: 'No lock scans in this window', hint: 'Counts are recorded each time the console scans the nodes.' }}
        >
          <ComposedChart data={locks} responsive style={{ width: '100%', height: '100%' }} margin={MARGIN}>
            <CartesianGrid vertical={false} strokeDasharray="3 3" />
            <TimeAxis w={w} ticks={ticks} />
            <YAxis {...Y_AXIS} allowDecimals={false} />
            <Tooltip content={(p) => <TimeTooltip {...p} unit="" />} isAnimationActive={false} />
            {STATE_SERIES.map((s) => (
              <Area
                key={s.key}
                dataKey={s.key}
                name={s.label}
                stackId="l"
                type="stepAfter"
                stroke="none"
                fill={s.color}
                fillOpacity={0.35}
                isAnimationActive={false}
                connectNulls={false}
              />
            ))}
            <Line
              dataKey="total"
              name="total"
              type="stepAfter"
              stroke="var(--text)"
              strokeWidth={1.5}
              dot={false}
              isAnimationActive={false}
              connectNulls={false}
            />
          </ComposedChart>
        </ChartCard>
      </div>
    </section>
  );
}

function TimeAxis({ w, ticks }: { w: TimeWindow; ticks: number[] }) {
  return (
    <XAxis
      dataKey="t"
      type="number"
      scale="time"
      domain={[w.start, w.end]}
      ticks={ticks}
      tickFormatter={tickLabel}
      allowDataOverflow
      tickLine={false}
      minTickGap={24}
    />
  );
}

function ChartCard({
  testId,
  state,
  title,
  subtitle,
  stat,
  legend,
  empty,
  errorText,
  note,
  knowledge,
  children,
}: {
  testId: string;
  state: LoadingState;
  /** Whether the chart's window was read in full ('known'), in part or not at all (said as data-knowledge). */
  knowledge?: 'known' | 'partial' | 'unknown';
  title: string;
  subtitle: string;
  stat: { value: string; label: string } | null;
  legend: Array<{ label: string; color: string; box?: boolean }>;
  empty: { title: string; hint: string };
  errorText: string | null;
  /** What the chart cannot see, said under its legend (e.g. nodes without keyspace notifications). */
  note?: string;
  children: ReactNode;
}) {
  const titleId = useId();
  return (
    <figure
      className={styles.card}
      data-testid={testId}
      data-loading-state={state}
      data-knowledge={knowledge}
      aria-labelledby={titleId}
      aria-busy={state === 'loading'}
    >
      <div className={styles.head}>
        <div>
          <h3 className={styles.title} id={titleId}>
            {title}
          </h3>
          <p className={styles.subtitle}>{subtitle}</p>
        </div>
        {stat && state === 'ready' ? (
          <div className={styles.stat}>
            <span className={styles.statValue}>{stat.value}</span>
            <span className={styles.statLabel}>{stat.label}</span>
          </div>
        ) : null}
      </div>
      <ul className={styles.legend} aria-label="Legend">
        {legend.map((l) => (
          <li key={l.label}>
            <span className={l.box ? styles.legendSwatchBox : styles.legendSwatch} style={{ background: l.color }} />
            {l.label}
          </li>
        ))}
      </ul>
      {note ? (
        <p className={styles.subtitle} data-testid={`${testId}-note`} role="note">
          {note}
        </p>
      ) : null}
      <div className={styles.plot}>
        {state === 'ready' ? children : null}
        {state === 'loading' ? <div className={styles.skeleton} aria-label="Loading" /> : null}
        {state === 'empty' ? (
          <div className={styles.overlay}>
            <div>
              <strong>{empty.title}</strong>
              {empty.hint}
            </div>
          </div>
        ) : null}
        {state === 'error' ? (
          <div className={`${styles.overlay} ${styles.overlayError}`} role="alert">
            <div>
              <strong>Could not read the history</strong>
              {errorText}
            </div>
          </div>
        ) : null}
      </div>
    </figure>
  );
}

function TimeTooltip({ active, payload, label, unit }: TooltipContentProps & { unit: string }) {
  if (!active || !payload?.length) return null;
  const rows = payload.filter((p) => p.value !== null && p.value !== undefined);
  if (!rows.length) return null;
  return (
    <div className={styles.tooltip}>
      <div className={styles.tooltipTime}>{typeof label === 'number' ? clockLabel(label) : label}</div>
      {rows.map((p) => (
        <div key={String(p.dataKey)} className={styles.tooltipRow}>
          <span>
            <span className={styles.legendSwatchBox} style={{ background: p.color ?? p.stroke }} />
            {p.name}
          </span>
          <strong>
            {typeof p.value === 'number' ? (unit === 'ms' ? fmtMs(p.value) : p.value.toLocaleString()) : String(p.value)}
            {unit ? ` ${unit}` : ''}
          </strong>
        </div>
      ))}
    </div>
  );
}
