import { GUTTER, RIGHT_PAD, runTime, type Lane, type Layout } from './timeline-layout';

/** Where the timeline's marks go across its width: the axis is the run's own time (prediction waits folded out). */
export interface TimelineScale {
  /** Places a run time. */
  xr: (t: number) => number;
  /** Places a wall time. */
  x: (t: number) => number;
  /** A bar's width from one wall time to another, never under 1.5 px. */
  w: (from: number, to: number) => number;
  /** The lane of a node, client or checker resource. */
  lane: (kind: Lane['kind'], id: string) => Lane | undefined;
  /** Width of the plot, right of the lane labels. */
  plot: number;
}

export function timelineScale(layout: Layout, width: number): TimelineScale {
  const plot = width - GUTTER - RIGHT_PAD;
  const xr = (t: number) => GUTTER + (Math.max(0, Math.min(t, layout.span)) / layout.span) * plot;
  const x = (t: number) => xr(runTime(t, layout.folds));
  const w = (from: number, to: number) => Math.max(1.5, x(to) - x(from));
  const lane = (kind: Lane['kind'], id: string) => layout.lanes.find((l) => l.kind === kind && l.id === id);
  return { xr, x, w, lane, plot };
}
