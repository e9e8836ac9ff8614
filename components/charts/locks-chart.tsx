import { useMemo } from 'react';
import { Area, CartesianGrid, ComposedChart, Line, Tooltip, YAxis } from 'recharts';
import { lockCountSeries } from './series';
import { STATE_ORDER, stateColor } from '../locks/lock-state';
import { ChartCard } from './chart-card';
import { MARGIN, TimeAxis, TimeTooltip, Y_AXIS } from './chart-parts';
import { chartState, type HistoryWindow } from './use-history';

/** Lock states in the chart, bottom to top, in the colours every other screen gives them. */
export const STATE_SERIES = STATE_ORDER.map((key) => ({ key, label: key, color: stateColor(key) }));

/** Locks at each scan, stacked by quorum state, with the total as a line. */
export function LocksChart({ history }: { history: HistoryWindow }) {
  const { buckets, w, ticks } = history;
  const locks = useMemo(() => lockCountSeries(buckets, w), [buckets, w]);
  const state = chartState(
    history.base,
    locks.some((p) => p.total !== null),
  );
  const lastLocks = [...locks].reverse().find((p) => p.total !== null);
  return (
    <ChartCard
      testId="chart-locks"
      state={state}
      errorText={history.errorText}
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
  );
}
