import { useMemo } from 'react';
import { CartesianGrid, Line, LineChart, Tooltip, YAxis } from 'recharts';
import { latencySeries } from './series';
import { ChartCard } from './chart-card';
import { axisMs, fmtMs, MARGIN, TimeAxis, TimeTooltip, Y_AXIS } from './chart-parts';
import { chartState, type HistoryWindow } from './use-history';

/** The console's own acquires: p50 and p99 per bucket, from the lock core's timings. */
export function LatencyChart({ history, perMinute }: { history: HistoryWindow; perMinute: boolean }) {
  const { buckets, w, ticks } = history;
  const latency = useMemo(() => latencySeries(buckets, w), [buckets, w]);
  const state = chartState(
    history.base,
    latency.some((p) => p.p50 !== null),
  );
  const lastLatency = [...latency].reverse().find((p) => p.p99 !== null);
  return (
    <ChartCard
      testId="chart-latency"
      state={state}
      errorText={history.errorText}
      title="Acquire latency"
      subtitle={`p50 and p99 per ${perMinute ? 'minute' : 'second'}, from the lock core's own timings`}
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
  );
}
