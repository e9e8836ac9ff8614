import { XAxis, type TooltipContentProps } from 'recharts';
import { clockLabel, tickLabel, type TimeWindow } from './series';
import styles from './charts.module.css';

export const fmtMs = (v: number) => (v < 1 ? v.toFixed(2) : v < 10 ? v.toFixed(1) : Math.round(v).toString());
/** Axis ticks: "0", "2.5 ms", "750 ms", "1.2 s" — short enough for a 56 px axis. */
export const axisMs = (v: number) => (v === 0 ? '0' : v >= 1_000 ? `${+(v / 1000).toFixed(1)} s` : `${+v.toFixed(v < 1 ? 2 : 1)} ms`);
export const Y_AXIS = { width: 56, tickLine: false, axisLine: false } as const;
export const MARGIN = { top: 6, right: 8, bottom: 0, left: 0 };

/** The charts' shared time axis over the window, on the round ticks of `timeTicks`. */
export function TimeAxis({ w, ticks }: { w: TimeWindow; ticks: number[] }) {
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

/** A point's time and each series' value in it (nulls left out), in the chart's unit. */
export function TimeTooltip({ active, payload, label, unit }: TooltipContentProps & { unit: string }) {
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
