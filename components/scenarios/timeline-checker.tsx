import type { RunView } from '@/lib/api/scenarios';
import { fmtSeconds } from './format';
import { GUTTER, textWidth } from './timeline-layout';
import type { TimelineScale } from './timeline-scale';
import styles from './timeline.module.css';

type Overlap = RunView['checker']['resources'][number]['overlaps'][number];

function overlapTitle(o: Overlap, resource: string, limit: number): string {
  const span = fmtSeconds(o.to - o.from);
  if (limit === 1)
    return `${o.clients.join(' and ')} both believe they hold ${resource} for ${span}${o.bothValid ? ', both within their validity' : ' (one past its validity)'}`;
  const who = `${o.clients.slice(0, -1).join(', ')} and ${o.clients.at(-1)}`;
  return `${who} all believe they hold a permit of ${resource} (${limit} permits) for ${span}${o.bothValid ? ', all within their validity' : ' (some past their validity)'}`;
}

/** The checker's lane per resource: "one holder at a time" (a semaphore: its permits), or each overlap in red with its clients. */
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
                  {(r.limit ?? 1) > 1 ? `✓ at most ${r.limit} holders at a time` : '✓ one holder at a time'}
                </text>
              )}
              {r.overlaps.map((o) => (
                <g key={`o-${o.from}`} data-testid="timeline-overlap">
                  <rect x={x(o.from)} y={l.y + 3} width={w(o.from, o.to)} height={l.h - 6} rx={3} className={styles.overlap}>
                    <title>{overlapTitle(o, r.resource, r.limit ?? 1)}</title>
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
