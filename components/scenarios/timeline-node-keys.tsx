import type { RunView } from '@/lib/api/scenarios';
import { clientColor, clientTint } from './palette';
import { fmtSeconds, OUTCOME_LABEL } from './format';
import { NODE_PAD, ROW_H, textWidth, type Layout } from './timeline-layout';
import type { TimelineScale } from './timeline-scale';
import styles from './timeline.module.css';

/** What each node holds: a bar in the holder's colour, the TTL still to run as a dashed fuse, a cut where it vanished early. */
export function NodeKeys({ run, now, layout, scale }: { run: RunView; now: number; layout: Layout; scale: TimelineScale }) {
  const { x, w, lane } = scale;
  const multi = run.resources.length > 1;
  const resIndex = (r: string) => run.resources.findIndex((x2) => x2.name === r) + 1;
  // A semaphore's slot key: the semaphore and the slot it is (the view names its slots' keys).
  const slotOf = (r: string) => {
    for (const x2 of run.resources) {
      const slot = x2.slots?.indexOf(r) ?? -1;
      if (slot >= 0) return { resource: x2.name, slot };
    }
    return null;
  };
  return (
    <>
      {layout.bars.map((b) => {
        const l = lane('node', String(b.node))!;
        const y = l.y + NODE_PAD + b.row * ROW_H;
        const color = clientColor(b.client);
        const slot = slotOf(b.resource);
        const label = slot ? `${b.client} · slot ${slot.slot}` : `${b.client}${multi ? `·${resIndex(b.resource)}` : ''}`;
        const what = slot ? `slot ${slot.slot} of ${slot.resource}` : b.resource;
        return (
          <g key={`k-${b.node}-${b.resource}-${b.from}`} data-testid="node-key" data-node={b.node} data-client={b.client}>
            {b.fuseTo !== null && (
              <rect
                x={x(b.to)}
                y={y + 1}
                width={w(b.to, b.fuseTo)}
                height={ROW_H - 4}
                rx={3}
                fill={clientTint(b.client, 14)}
                stroke={color}
                strokeDasharray="3 3"
                strokeOpacity={0.7}
              />
            )}
            <rect x={x(b.from)} y={y + 1} width={w(b.from, b.to)} height={ROW_H - 4} rx={3} fill={color}>
              <title>{`node ${b.node} holds ${b.client}'s key on ${what} · ${b.fuseTo !== null ? `expires in ${fmtSeconds(b.expiresAt - now)}` : b.cut ? 'deleted before its expiry' : 'expired'}`}</title>
            </rect>
            {b.cut && <rect x={x(b.to) - 1} y={y - 1} width={2} height={ROW_H} className={styles.cut} />}
            {x(b.to) - x(b.from) > textWidth(label) && (
              <text x={x(b.from) + 4} y={y + ROW_H - 5} className={styles.barText}>
                {label}
              </text>
            )}
          </g>
        );
      })}
    </>
  );
}

/** Failed rounds: which client each node voted for (a split vote shows several colours at once). */
export function FailedVotes({ run, scale }: { run: RunView; scale: TimelineScale }) {
  const { x, lane } = scale;
  return (
    <>
      {run.timeline.attempts
        .filter((a) => a.outcome !== null && a.outcome !== 'granted' && a.to !== null)
        .flatMap((a) =>
          a.votes
            .filter((v) => v.vote === 'for')
            .map((v) => {
              const l = lane('node', String(v.node));
              if (!l) return null;
              return (
                <rect
                  key={`v-${a.id}-${v.node}`}
                  x={x(a.to!) - 2}
                  y={l.y + 3}
                  width={4}
                  height={l.h - 6}
                  rx={1.5}
                  fill={clientColor(a.client)}
                  className={styles.vote}
                  data-testid="failed-vote"
                  data-client={a.client}
                  data-node={v.node}
                >
                  <title>{`${fmtSeconds(a.to!)} · node ${v.node} voted for ${a.client}, but ${a.client} had no majority (${OUTCOME_LABEL[a.outcome!] ?? a.outcome})`}</title>
                </rect>
              );
            }),
        )}
    </>
  );
}

/** Moments on the node lanes (actions, drift steps): a small triangle on the lane's top edge. */
export function NodeMarkers({ run, scale }: { run: RunView; scale: TimelineScale }) {
  const { x, lane } = scale;
  return (
    <>
      {run.timeline.markers
        .filter((m) => m.node !== null && m.kind !== 'clean')
        .map((m, i) => {
          const l = lane('node', String(m.node))!;
          return (
            <g key={`m-${i}`} className={styles.marker}>
              <path
                d={`M ${x(m.t) - 4} ${l.y - 1} L ${x(m.t) + 4} ${l.y - 1} L ${x(m.t)} ${l.y + 5} Z`}
                className={styles[`mark-${m.kind}`] ?? styles.markOther}
              />
              <title>{`${fmtSeconds(m.t)} · node ${m.node}: ${m.label}`}</title>
            </g>
          );
        })}
    </>
  );
}
