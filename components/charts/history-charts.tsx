'use client';

import { useState } from 'react';
import { GrantsChart } from './grants-chart';
import { LatencyChart } from './latency-chart';
import { LocksChart } from './locks-chart';
import { RttChart } from './rtt-chart';
import { useHistoryWindow } from './use-history';
import styles from './charts.module.css';

/** The windows the picker offers; the last three read the server's one-minute buckets. */
const WINDOWS = [
  { label: '1 min', ms: 60_000, resolution: '1s' },
  { label: '5 min', ms: 300_000, resolution: '1s' },
  { label: '10 min', ms: 600_000, resolution: '1s' },
  { label: '1 h', ms: 3_600_000, resolution: '1m' },
  { label: '6 h', ms: 21_600_000, resolution: '1m' },
  { label: '24 h', ms: 86_400_000, resolution: '1m' },
] as const;

/**
 * The overview's charts, from the server's rolling window (1 s buckets, 10 minutes). Each chart
 * carries `data-loading-state` (loading | ready | empty | error) so tests wait on state, not time.
 */
export function HistoryCharts({ nodeCount }: { nodeCount: number }) {
  const [span, setSpan] = useState<number>(300_000);
  const resolution = WINDOWS.find((o) => o.ms === span)?.resolution ?? '1s';
  const history = useHistoryWindow(span, resolution);

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
        <LatencyChart history={history} perMinute={resolution !== '1s'} />
        <GrantsChart history={history} />
        <RttChart history={history} nodeCount={nodeCount} />
        <LocksChart history={history} />
      </div>
    </section>
  );
}
