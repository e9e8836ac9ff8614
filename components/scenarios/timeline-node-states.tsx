import type { RunView } from '@/lib/api/scenarios';
import { fmtSeconds } from './format';
import { textWidth } from './timeline-layout';
import type { TimelineScale } from './timeline-scale';
import styles from './timeline.module.css';

const QUARANTINE_CAUSE: Record<string, string> = {
  restart: 'its redis-server restarted, maybe from older data',
  'data-loss': 'its sentinel was gone, so it lost data',
  eviction: 'it evicted keys',
  replaced: 'a replication sync replaced its data',
  rollback: 'its data went back in time within one process (a restore in place)',
  'clock-jump': 'its clock jumped, so keys may have expired early',
};

const STATE_LABEL: Record<string, string> = {
  down: 'down',
  starting: 'starting',
  stopping: 'stopping',
  paused: 'paused',
  partitioned: 'partitioned',
  slow: 'slow',
  reset: 'connections reset',
  unknown: '?',
};

/** Each node's spells out of service on its lane: crashes (hatched), pauses, partitions, latency. */
export function NodeStates({ run, now, scale, uid }: { run: RunView; now: number; scale: TimelineScale; uid: string }) {
  const { x, w, lane } = scale;
  return (
    <>
      {run.timeline.nodeStates
        .filter((s) => s.state !== 'up')
        .map((s) => {
          const l = lane('node', String(s.node));
          if (!l) return null;
          const to = s.to ?? now;
          return (
            <g key={`st-${s.node}-${s.from}`} data-testid={`node-state-${s.node}`} data-state={s.state}>
              <rect
                x={x(s.from)}
                y={l.y + 1}
                width={w(s.from, to)}
                height={l.h - 2}
                className={styles[`state-${s.state}`] ?? styles.stateOther}
                fill={s.state === 'down' || s.state === 'starting' || s.state === 'stopping' ? `url(#hatch-${uid})` : undefined}
              >
                <title>{`node ${s.node}: ${STATE_LABEL[s.state] ?? s.state}${s.detail ? ` (${s.detail})` : ''}`}</title>
              </rect>
              {x(to) - x(s.from) > 64 && (
                <text x={x(s.from) + 5} y={l.y + l.h - 4} className={styles.stateText}>
                  {s.state === 'slow' ? s.detail : STATE_LABEL[s.state]}
                </text>
              )}
            </g>
          );
        })}
    </>
  );
}

/** Quarantines: when a node sat out every vote for the run's prefix (read from its sentinel), and why. */
export function Quarantines({ run, now, scale }: { run: RunView; now: number; scale: TimelineScale }) {
  const { x, w, lane } = scale;
  return (
    <>
      {run.timeline.quarantines.map((q) => {
        const l = lane('node', String(q.node));
        if (!l) return null;
        const to = Math.min(q.to, now);
        const label = `quarantined · ${q.cause}`;
        return (
          <g key={`q-${q.node}-${q.from}`} data-testid="node-quarantine" data-node={q.node} data-cause={q.cause}>
            <rect x={x(q.from)} y={l.y + 1} width={w(q.from, to)} height={l.h - 2} className={styles.quarantine}>
              <title>{`node ${q.node} sits out every vote (quarantined: ${QUARANTINE_CAUSE[q.cause] ?? q.cause}) from ${fmtSeconds(q.from)} until ${fmtSeconds(q.to)}`}</title>
            </rect>
            {x(to) - x(q.from) > textWidth(label) && (
              <text x={x(q.from) + 5} y={l.y + l.h - 4} className={styles.quarantineText}>
                {label}
              </text>
            )}
          </g>
        );
      })}
    </>
  );
}
