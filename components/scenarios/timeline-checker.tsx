import type { RunView } from '@/lib/api/scenarios';
import { fmtSeconds } from './format';
import { GUTTER, textWidth } from './timeline-layout';
import type { TimelineScale } from './timeline-scale';
import styles from './timeline.module.css';

/** The checker's lane per resource: "one holder at a time", or each overlap in red with the two clients. */
export function CheckerLanes({ run, scale }: { run: RunView; scale: TimelineScale }) {
  const { x, w, plot } = scale;
  return (
    <>
      {run.checker.resources
        .filter((r) => r.resource !== 'probe')
        .map((r) => {
          const l = scale.lane('checker', r.resource)!;
          return (
            <g key={`chk-${r.resource}`} data-testid="checker-lane" data-resource={r.resource} data-state={r.ok ? 'ok' : 'violation'}>
              {r.ok && r.holders + run.timeline.beliefs.filter((b) => b.resource === r.resource).length > 0 && (
                <text x={GUTTER + plot - 8} y={l.y + l.h / 2 + 4} textAnchor="end" className={styles.okText}>
                  ✓ one holder at a time
                </text>
              )}
              {r.overlaps.map((o) => (
                <g key={`o-${o.from}`} data-testid="timeline-overlap">
                  <rect x={x(o.from)} y={l.y + 3} width={w(o.from, o.to)} height={l.h - 6} rx={3} className={styles.overlap}>
                    <title>{`${o.clients.join(' and ')} both believe they hold ${r.resource} for ${fmtSeconds(o.to - o.from)}${o.bothValid ? ', both within their validity' : ' (one past its validity)'}`}</title>
                  </rect>
                  {x(o.to) - x(o.from) > textWidth(o.clients.join(' + ')) && (
                    <text x={x(o.from) + 5} y={l.y + l.h - 8} className={styles.overlapText}>{`${o.clients.join(' + ')}`}</text>
                  )}
                </g>
              ))}
            </g>
          );
        })}
    </>
  );
}
