import type { RunView } from '@/lib/api/scenarios';

/**
 * Geometry of the scenario timeline: lanes (nodes, clients, checker), their heights, and the
 * time scale. Pure, so the SVG component only draws.
 */

export const GUTTER = 128;
export const RIGHT_PAD = 18;
export const AXIS_H = 26;
export const SECTION_H = 22;
export const ROW_H = 15;
export const NODE_PAD = 7;
export const CLIENT_H = 44;
export const CHECK_H = 24;

export interface KeyBar {
  node: number;
  resource: string;
  client: string;
  from: number;
  /** Drawn solid up to here. */
  to: number;
  /** Remaining TTL drawn as a fuse up to here (open keys only). */
  fuseTo: number | null;
  expiresAt: number;
  row: number;
  /** Vanished before its expiry (released, cleaned up, or the node died). */
  cut: boolean;
}

export interface Lane {
  kind: 'node' | 'client' | 'checker';
  id: string;
  label: string;
  sub: string;
  y: number;
  h: number;
}

export interface Layout {
  /** The visible span in run time (prediction waits folded out). */
  span: number;
  /** The waits for a prediction, in wall time: folded out of the axis. */
  folds: Fold[];
  ticks: number[];
  lanes: Lane[];
  sections: Array<{ label: string; y: number }>;
  bars: KeyBar[];
  height: number;
}

/** Visible span: while live at least 10 s, growing with the run; once final, fitted to it. Whole seconds. */
export function spanFor(now: number, live = true): number {
  if (!live) return Math.max(3_000, Math.ceil((now * 1.02 + 250) / 1000) * 1000);
  return Math.max(10_000, Math.ceil((now * 1.06 + 600) / 1000) * 1000);
}

/** Rough width of a label in the timeline's 10.5 px bold font. */
export function textWidth(text: string): number {
  return text.length * 6.4 + 8;
}

export function tickStep(span: number): number {
  return span <= 16_000 ? 1_000 : span <= 36_000 ? 2_000 : 5_000;
}

/** A wait for a prediction's answer (wall time from, to): time the run stood still for the viewer. */
export interface Fold {
  from: number;
  to: number;
}

/** The waits for a prediction so far: the predict steps, from their start to the answer (or `now`). */
export function foldsOf(run: Pick<RunView, 'steps'>, now: number): Fold[] {
  return run.steps
    .filter((s) => s.kind === 'predict' && s.startedAt !== null && s.startedAt < now)
    .map((s) => ({ from: s.startedAt!, to: Math.min(s.endedAt ?? now, now) }))
    .filter((f) => f.to > f.from);
}

/**
 * Wall time → the run's own time: the prediction waits before `t` taken out (a moment inside one
 * is its start). The timeline's axis is drawn on this, so a run answered slowly is not squeezed
 * into the end of a long axis.
 */
export function runTime(t: number, folds: readonly Fold[]): number {
  let out = t;
  for (const f of folds) {
    if (t >= f.to) out -= f.to - f.from;
    else if (t > f.from) out -= t - f.from;
  }
  return out;
}

/** `spanMs`: a fixed visible span in run time (a replay keeps the finished run's axis while `now` moves). */
export function layoutTimeline(run: RunView, now: number, live = true, spanMs?: number): Layout {
  const folds = foldsOf(run, now);
  const span = spanMs ?? spanFor(runTime(now, folds), live);
  const step = tickStep(span);
  const ticks: number[] = [];
  for (let t = 0; t <= span; t += step) ticks.push(t);

  // Key bars, packed into rows per node so keys of two resources held at once do not overlap.
  const bars: KeyBar[] = [];
  const rowsByNode = new Map<number, number>();
  for (const node of run.nodes) {
    const segs = run.timeline.keys.filter((k) => k.node === node.id).sort((a, b) => a.from - b.from);
    const rowEnds: number[] = [];
    for (const k of segs) {
      const to = k.open ? Math.max(k.from, Math.min(now, k.expiresAt)) : k.to;
      let row = rowEnds.findIndex((end) => end <= k.from);
      if (row === -1) {
        row = rowEnds.length;
        rowEnds.push(0);
      }
      const fuseTo = k.open && k.expiresAt > now ? k.expiresAt : null;
      rowEnds[row] = fuseTo ?? to;
      bars.push({
        node: node.id,
        resource: k.resource,
        client: k.client,
        from: k.from,
        to,
        fuseTo,
        expiresAt: k.expiresAt,
        row,
        cut: !k.open && k.to < k.expiresAt - 80,
      });
    }
    rowsByNode.set(node.id, Math.max(1, rowEnds.length));
  }

  const lanes: Lane[] = [];
  const sections: Layout['sections'] = [];
  let y = AXIS_H;
  sections.push({ label: 'Nodes — the keys each node really holds', y });
  y += SECTION_H;
  for (const node of run.nodes) {
    const h = rowsByNode.get(node.id)! * ROW_H + NODE_PAD * 2;
    lanes.push({ kind: 'node', id: String(node.id), label: `Node ${node.id}`, sub: node.label, y, h });
    y += h;
  }
  y += 6;
  sections.push({ label: 'Clients — when each one believes it holds the lock', y });
  y += SECTION_H;
  for (const c of run.clients) {
    const pauses = run.timeline.markers.some((m) => m.client === c.name && m.kind === 'pause');
    lanes.push({
      kind: 'client',
      id: c.name,
      label: `Client ${c.name}`,
      sub: c.unsafe ? (c.unsafeSetting ?? 'unsafe') : pauses ? 'pause is simulated' : '',
      y,
      h: CLIENT_H,
    });
    y += CLIENT_H;
  }
  y += 6;
  sections.push({ label: 'Mutual-exclusion checker', y });
  y += SECTION_H;
  const checked = run.checker.resources.filter((r) => r.resource !== 'probe');
  for (const r of checked) {
    lanes.push({ kind: 'checker', id: r.resource, label: checked.length > 1 ? r.resource : 'Holders', sub: '', y, h: CHECK_H });
    y += CHECK_H;
  }
  return { span, folds, ticks, lanes, sections, bars, height: y + 20 };
}

/** Client pauses (simulated) from the pause/wake markers. */
export function pausesOf(run: RunView, client: string, now: number): Array<{ from: number; to: number }> {
  const out: Array<{ from: number; to: number }> = [];
  let open: number | null = null;
  for (const m of run.timeline.markers) {
    if (m.client !== client) continue;
    if (m.kind === 'pause' && open === null) open = m.t;
    if (m.kind === 'wake' && open !== null) {
      out.push({ from: open, to: m.t });
      open = null;
    }
  }
  if (open !== null) out.push({ from: open, to: now });
  return out;
}
