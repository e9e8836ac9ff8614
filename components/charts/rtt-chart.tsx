import { useMemo } from 'react';
import { CartesianGrid, Line, LineChart, Tooltip, YAxis } from 'recharts';
import { rttSeries } from './series';
import { nodeSeriesColor as nodeColor } from '../ui/palette';
import { ChartCard } from './chart-card';
import { axisMs, fmtMs, MARGIN, TimeAxis, TimeTooltip, Y_AXIS } from './chart-parts';
import { chartState, type HistoryWindow } from './use-history';

/** Each node's round-trip time as the console read it, a line per node; the slowest one now as the figure. */
export function RttChart({ history, nodeCount }: { history: HistoryWindow; nodeCount: number }) {
  const { buckets, w, ticks } = history;
  const rtt = useMemo(() => rttSeries(buckets, w, nodeCount), [buckets, w, nodeCount]);
  const state = chartState(
    history.base,
    rtt.some((p) => Object.entries(p).some(([k, v]) => k !== 't' && v !== null)),
  );
  const lastRtt = [...rtt].reverse().find((p) => p[`n1`] !== undefined && Object.entries(p).some(([k, v]) => k !== 't' && v !== null));
  const maxRtt = lastRtt
    ? Math.max(
        ...Object.entries(lastRtt)
          .filter(([k, v]) => k !== 't' && v !== null)
          .map(([, v]) => v as number),
      )
    : null;
  return (
    <ChartCard
      testId="chart-rtt"
      state={state}
      errorText={history.errorText}
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
  );
}
