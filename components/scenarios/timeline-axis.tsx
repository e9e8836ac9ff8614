import { clientColor } from './palette';
import { fmtSeconds } from './format';
import { GUTTER, textWidth, type Layout } from './timeline-layout';
import type { TimelineScale } from './timeline-scale';
import styles from './timeline.module.css';

/** The hatch of a node down and the stripes of a belief past its validity, named by the timeline's `uid`. */
export function TimelinePatterns({ uid }: { uid: string }) {
  return (
    <defs>
      <pattern id={`hatch-${uid}`} width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
        <rect width="6" height="6" className={styles.hatchBg} />
        <line x1="0" y1="0" x2="0" y2="6" className={styles.hatchLine} strokeWidth="2.2" />
      </pattern>
      <pattern id={`stale-${uid}`} width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
        <line x1="0" y1="0" x2="0" y2="6" className={styles.staleLine} strokeWidth="3" />
      </pattern>
    </defs>
  );
}

/** The time axis: a grid line each second (labelled as often as the labels fit) and the folded-out prediction waits. */
export function TimelineAxis({ layout, scale }: { layout: Layout; scale: TimelineScale }) {
  const { xr, x } = scale;
  const tickGap = layout.ticks.length > 1 ? xr(layout.ticks[1]!) - xr(layout.ticks[0]!) : Number.POSITIVE_INFINITY;
  const tickEvery = Math.max(1, Math.ceil(36 / tickGap));
  return (
    <>
      {layout.ticks.map((t, i) => (
        <g key={t}>
          <line x1={xr(t)} x2={xr(t)} y1={20} y2={layout.height - 4} className={styles.grid} />
          {/* A label every `tickEvery` lines: on a phone "0 s1 s2 s3 s" ran into one another. */}
          {i % tickEvery === 0 ? (
            <text x={xr(t)} y={14} className={styles.tick} textAnchor="middle">
              {t / 1000} s
            </text>
          ) : null}
        </g>
      ))}
      {layout.folds.map((f) => (
        <g key={`fold-${f.from}`} data-testid="timeline-fold">
          <line x1={x(f.from)} x2={x(f.from)} y1={20} y2={layout.height - 4} className={styles.fold} />
          <title>{`${fmtSeconds(f.to - f.from)} waiting for a prediction, folded out of the run's time`}</title>
        </g>
      ))}
    </>
  );
}

/** The section titles (nodes, clients, checker) and each lane's band with its label. */
export function TimelineLanes({ layout, scale, width }: { layout: Layout; scale: TimelineScale; width: number }) {
  return (
    <>
      {layout.sections.map((s) => (
        <text key={s.label} x={8} y={s.y + 15} className={styles.section}>
          {/* SVG text does not wrap: where the whole title does not fit, its head ("Nodes"), the whole on hover. */}
          {textWidth(s.label) * 1.25 + 16 > width ? s.label.split(' — ')[0] : s.label}
          <title>{s.label}</title>
        </text>
      ))}

      {layout.lanes.map((l) => (
        <g key={`${l.kind}-${l.id}`}>
          <rect
            x={GUTTER}
            y={l.y + 1}
            width={scale.plot}
            height={l.h - 2}
            rx={4}
            className={l.kind === 'checker' ? styles.checkLane : styles.lane}
          />
          <text x={10} y={l.y + l.h / 2 + (l.sub ? -2 : 4)} className={styles.laneLabel}>
            {l.kind === 'client' && (
              <tspan className={styles.swatch} fill={clientColor(l.id)}>
                ●{' '}
              </tspan>
            )}
            {l.label}
          </text>
          {l.sub && (
            <text x={10} y={l.y + l.h / 2 + 11} className={styles.laneSub}>
              {l.sub}
            </text>
          )}
        </g>
      ))}
    </>
  );
}

/** While the run runs: where its clock stands. */
export function NowLine({ layout, scale, now }: { layout: Layout; scale: TimelineScale; now: number }) {
  const { x } = scale;
  return (
    <g>
      <line x1={x(now)} x2={x(now)} y1={20} y2={layout.height - 4} className={styles.nowLine} />
      <text x={x(now)} y={layout.height - 6} className={styles.nowText} textAnchor="middle">
        now
      </text>
    </g>
  );
}
