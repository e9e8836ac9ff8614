'use client';

import { useEffect, useId, useRef, useState } from 'react';
import type { RunView } from '@/lib/api/scenarios';
import { fenceFormatter, fmtSeconds, runFences } from './format';
import { NowLine, TimelineAxis, TimelineLanes, TimelinePatterns } from './timeline-axis';
import { CheckerLanes } from './timeline-checker';
import { ClientLane, OverlapBands } from './timeline-clients';
import { FenceTicks } from './timeline-fences';
import { layoutTimeline, runTime } from './timeline-layout';
import { FailedVotes, NodeKeys, NodeMarkers } from './timeline-node-keys';
import { NodeStates, Quarantines } from './timeline-node-states';
import { timelineScale } from './timeline-scale';
import styles from './timeline.module.css';

function useWidth(ref: React.RefObject<HTMLDivElement | null>): number {
  const [width, setWidth] = useState(1100);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    // Down to a phone's width: the whole run stays in view (labels that do not fit are left out).
    const observer = new ResizeObserver(([entry]) => setWidth(Math.max(330, Math.floor(entry!.contentRect.width))));
    observer.observe(el);
    return () => observer.disconnect();
  }, [ref]);
  return width;
}

/**
 * The run drawn over time: one lane per node (whose key it holds, with the TTL still to run as a
 * dashed fuse; crashes, partitions, latency), one lane per client (when it believes it holds the
 * lock, its attempts and writes), and the checker (overlaps in red, drawn across the clients).
 */
export function Timeline({ run, now, live, spanMs }: { run: RunView; now: number; live: boolean; spanMs?: number }) {
  const wrap = useRef<HTMLDivElement>(null);
  const width = useWidth(wrap);
  const uid = useId().replace(/:/g, '');
  const layout = layoutTimeline(run, now, live, spanMs);
  const scale = timelineScale(layout, width);
  const runNow = runTime(now, layout.folds);
  const waited = now - runNow;
  const clientLanes = layout.lanes.filter((l) => l.kind === 'client');
  const clientTop = clientLanes[0]?.y ?? 0;
  const clientBottom = clientLanes.length ? clientLanes[clientLanes.length - 1]!.y + clientLanes[clientLanes.length - 1]!.h : 0;
  const shortFence = fenceFormatter(runFences(run));

  return (
    <div ref={wrap} className={styles.wrap} data-testid="timeline" data-state={live ? 'live' : 'final'}>
      <svg
        width={width}
        height={layout.height}
        role="img"
        aria-label={`Timeline of the run, ${fmtSeconds(runNow)} of run time so far${waited > 0 ? `, not counting ${fmtSeconds(waited)} spent on predictions` : ''}`}
        className={styles.svg}
      >
        <TimelinePatterns uid={uid} />
        <TimelineAxis layout={layout} scale={scale} />
        <TimelineLanes layout={layout} scale={scale} width={width} />
        <NodeStates run={run} now={now} scale={scale} uid={uid} />
        <Quarantines run={run} now={now} scale={scale} />
        <FenceTicks run={run} now={now} x={scale.x} lane={scale.lane} shortFence={shortFence} />
        <NodeKeys run={run} now={now} layout={layout} scale={scale} />
        <FailedVotes run={run} scale={scale} />
        <NodeMarkers run={run} scale={scale} />
        <OverlapBands run={run} scale={scale} top={clientTop} bottom={clientBottom} />
        {run.clients.map((c) => (
          <ClientLane key={`c-${c.name}`} run={run} client={c.name} now={now} scale={scale} uid={uid} shortFence={shortFence} />
        ))}
        <CheckerLanes run={run} scale={scale} />
        {live && <NowLine layout={layout} scale={scale} now={now} />}
      </svg>
    </div>
  );
}
