import type { RunView } from '@/lib/api/scenarios';
import { fmtSeconds } from './format';
import { textWidth, type Lane } from './timeline-layout';
import styles from './timeline.module.css';

/**
 * Each node's fence register on its lane, as it moved (a grant's fence round raising it, a restart
 * from an old snapshot or a flush taking it back): a tick at each change, the value while there is
 * room for it (the whole value is the tick's title).
 */
export function FenceTicks({
  run,
  now,
  x,
  lane,
  shortFence,
}: {
  run: RunView;
  now: number;
  x: (t: number) => number;
  lane: (kind: Lane['kind'], id: string) => Lane | undefined;
  shortFence: (fence: number | null) => string;
}) {
  // A quarantine's label sits on the same line: the value is in the tick's title then.
  const underQuarantineLabel = (node: number, from: number, to: number) =>
    run.timeline.quarantines.some((q) => q.node === node && x(q.from) < to && x(Math.min(q.to, now)) > from);
  return (
    <>
      {run.timeline.fences.map((f, i, all) => {
        const l = lane('node', String(f.node));
        if (!l) return null;
        const next = all[i + 1]?.node === f.node ? all[i + 1]!.at : now;
        const label = `fence ${f.value === 0 ? 'none' : shortFence(f.value)}`;
        const end = x(f.at) + textWidth(label) + 6;
        return (
          <g key={`f-${f.node}-${f.at}`} data-testid="node-fence" data-node={f.node} data-value={f.value}>
            <line x1={x(f.at)} x2={x(f.at)} y1={l.y + l.h - 9} y2={l.y + l.h - 1} className={styles.fenceTick} />
            <title>{`${fmtSeconds(f.at)} · node ${f.node}: fence register ${f.value === 0 ? 'none' : f.value}`}</title>
            {x(Math.min(next, now)) > end && !underQuarantineLabel(f.node, x(f.at), end) && (
              <text x={x(f.at) + 3} y={l.y + l.h - 2} className={styles.fenceText}>
                {label}
              </text>
            )}
          </g>
        );
      })}
    </>
  );
}
