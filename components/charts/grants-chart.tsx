import { useMemo } from 'react';
import { Bar, CartesianGrid, ComposedChart, Line, Tooltip, XAxis, YAxis } from 'recharts';
import type { HistoryResponse } from '@/lib/api/history';
import { grantKnowledge, grantSeries, outcomeBinMs, outcomeSeries, tickLabel } from './series';
import { toneColor } from '../ui/palette';
import { ChartCard } from './chart-card';
import { MARGIN, TimeTooltip, Y_AXIS } from './chart-parts';
import { chartState, type HistoryWindow } from './use-history';

/** What an empty grants chart means: not counted yet, not read, none while read, or none. */
function grantsEmpty(grants: HistoryResponse['grants'] | undefined, knowledge: { known: number; unread: number }) {
  if (grants && !grants.counting)
    return {
      title: 'Grants on the masters are not counted yet',
      hint: 'The console subscribes to the masters when it starts; acquires through it are counted here meanwhile.',
    };
  if (knowledge.unread > 0 && knowledge.known === 0)
    return {
      title: 'Grants on the masters could not be read in this window',
      hint: 'No master answered the console: locks taken meanwhile are unknown, not none.',
    };
  if (knowledge.unread > 0)
    return {
      title: 'No grants seen while the masters could be read',
      hint: 'For part of this window no master answered: grants then are unknown, not none.',
    };
  return { title: 'No grants in this window', hint: 'Every lock taken on the masters, by any client, is counted here.' };
}

/** Grants seen on the masters by any client (a line), and this console's own acquires, granted and failed (bars). */
export function GrantsChart({ history }: { history: HistoryWindow }) {
  const { buckets, w, ticks, grants } = history;
  const binMs = outcomeBinMs(w);
  const grantPoints = useMemo(() => grantSeries(buckets, w, binMs), [buckets, w, binMs]);
  const outcomes = useMemo(() => {
    const seen = new Map(grantPoints.map((p) => [p.t, p.seen]));
    return outcomeSeries(buckets, w, binMs).map((p) => ({ ...p, seen: seen.get(p.t) ?? null }));
  }, [buckets, w, binMs, grantPoints]);
  const knowledge = grantKnowledge(grantPoints);
  const state = chartState(
    history.base,
    outcomes.some((p) => (p.ok ?? 0) + (p.failed ?? 0) + (p.seen ?? 0) > 0),
  );
  const seenSum = outcomes.reduce((s, p) => s + (p.seen ?? 0), 0);
  const okSum = outcomes.reduce((s, p) => s + (p.ok ?? 0), 0);
  const failSum = outcomes.reduce((s, p) => s + (p.failed ?? 0), 0);
  return (
    <ChartCard
      testId="chart-outcomes"
      state={state}
      errorText={history.errorText}
      title="Grants on the masters"
      subtitle={`locks taken by any client, seen on the masters (line), and this console's own acquires, granted vs failed (bars), per ${binMs < 60_000 ? `${binMs / 1000} s` : `${binMs / 60_000} min`}`}
      stat={
        state === 'ready'
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
      empty={grantsEmpty(grants, knowledge)}
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
  );
}
