import type { RunView } from '@/lib/api/scenarios';
import { clientColor, clientTint } from './palette';
import { fmtSeconds } from './format';
import { textWidth, type Lane } from './timeline-layout';
import type { TimelineScale } from './timeline-scale';
import styles from './timeline.module.css';

type Belief = RunView['timeline']['beliefs'][number];

/**
 * When a client believed it held a resource: solid in its colour while valid, striped past its
 * validity (stale), a tick where the validity ends, and the fence while there is room for it.
 */
export function BeliefBar({
  belief: b,
  lane: l,
  now,
  scale,
  uid,
  multi,
  shortFence,
}: {
  belief: Belief;
  lane: Lane;
  now: number;
  scale: TimelineScale;
  uid: string;
  multi: boolean;
  shortFence: (fence: number | null) => string;
}) {
  const { x, w } = scale;
  const color = clientColor(b.client);
  const end = b.to ?? now;
  const validEnd = Math.min(end, b.validUntil);
  const y = l.y + 13;
  const room = x(validEnd) - x(b.from);
  const long = `${multi ? `${b.resource} · ` : 'holds · '}fence ${shortFence(b.fence)}`;
  const text = room > textWidth(long) ? long : room > textWidth(shortFence(b.fence)) ? shortFence(b.fence) : null;
  return (
    <g data-testid="belief" data-client={b.client} data-resource={b.resource} data-stale={b.stale}>
      <rect x={x(b.from)} y={y} width={w(b.from, validEnd)} height={15} rx={3} fill={color}>
        <title>{`${b.client} believes it holds ${b.resource} (fence ${b.fence ?? 'none'}), validity until ${fmtSeconds(b.validUntil)}`}</title>
      </rect>
      {end > b.validUntil && (
        <g>
          <rect x={x(b.validUntil)} y={y} width={w(b.validUntil, end)} height={15} rx={3} fill={clientTint(b.client, 35)} />
          <rect x={x(b.validUntil)} y={y} width={w(b.validUntil, end)} height={15} fill={`url(#stale-${uid})`}>
            <title>{`${b.client} still believes it holds ${b.resource} after its validity ended (stale)`}</title>
          </rect>
        </g>
      )}
      {(b.to === null || b.stale) && (
        <line x1={x(b.validUntil)} x2={x(b.validUntil)} y1={y - 4} y2={y + 19} className={styles.validityTick} />
      )}
      {text && (
        <text x={x(b.from) + 5} y={y + 11} className={styles.barText}>
          {text}
        </text>
      )}
    </g>
  );
}
