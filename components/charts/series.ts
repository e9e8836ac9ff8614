import type { HistoryBucket } from '@/lib/client/queries';

/** A gap longer than this between two readings breaks a line instead of drawing across it. */
export const GAP_MS = 5_000;

export interface TimeWindow {
  start: number;
  end: number;
}

/** The window the charts show: `spanMs` back from the newest bucket (server time, 1 s buckets). */
export function windowOf(buckets: readonly HistoryBucket[], spanMs: number, fallbackEnd: number): TimeWindow {
  const end = buckets.at(-1)?.t ?? Math.floor(fallbackEnd / 1000) * 1000;
  return { start: end - spanMs, end };
}

/** Round tick positions inside the window: every 15 s for a minute, every minute for 5, every 2 for 10. */
export function timeTicks(w: TimeWindow): number[] {
  const span = w.end - w.start;
  const step = span <= 60_000 ? 15_000 : span <= 300_000 ? 60_000 : 120_000;
  const ticks: number[] = [];
  for (let t = Math.ceil(w.start / step) * step; t <= w.end; t += step) ticks.push(t);
  return ticks;
}

/**
 * Points of a sampled series: only the seconds that have a reading, plus an all-null point inside
 * every gap longer than GAP_MS, so the line breaks where nothing was read rather than inventing a
 * straight line across minutes nobody measured.
 */
export function sampled<P extends { t: number }>(points: readonly P[], blank: (t: number) => P): P[] {
  const out: P[] = [];
  let prev: P | undefined;
  for (const p of points) {
    if (prev && p.t - prev.t > GAP_MS) out.push(blank(prev.t + 1_000));
    out.push(p);
    prev = p;
  }
  return out;
}

export interface LatencyPoint {
  t: number;
  p50: number | null;
  p99: number | null;
  n: number;
}
export function latencySeries(buckets: readonly HistoryBucket[], w: TimeWindow): LatencyPoint[] {
  const pts = buckets
    .filter((b) => b.t >= w.start && b.t <= w.end && b.p50Ms !== null)
    .map((b) => ({ t: b.t, p50: b.p50Ms, p99: b.p99Ms, n: b.acquireOk + b.acquireFailed }));
  return sampled(pts, (t) => ({ t, p50: null, p99: null, n: 0 }));
}

/** Seconds per bar of the outcomes chart: 1 s bars up to a minute, then 5 s, so a bar stays wide enough to see. */
export function outcomeBinMs(w: TimeWindow): number {
  return w.end - w.start <= 60_000 ? 1_000 : 5_000;
}

export interface OutcomePoint {
  t: number;
  ok: number | null;
  failed: number | null;
}
/**
 * Acquires per bin (see outcomeBinMs), ok vs failed, one bar per bin of the window, the bar at the
 * bin's start. From the first bucket the server kept, an empty second is a measured zero (the server
 * counts every acquire); a bin entirely before it was not measured and is null.
 */
export function outcomeSeries(buckets: readonly HistoryBucket[], w: TimeWindow, binMs = outcomeBinMs(w)): OutcomePoint[] {
  const first = buckets[0]?.t ?? Number.POSITIVE_INFINITY;
  const byT = new Map(buckets.map((b) => [b.t, b]));
  const out: OutcomePoint[] = [];
  const start = Math.floor((w.start + 1_000) / binMs) * binMs;
  for (let t = start; t <= w.end; t += binMs) {
    if (t + binMs - 1_000 < first) {
      out.push({ t, ok: null, failed: null });
      continue;
    }
    let ok = 0;
    let failed = 0;
    for (let s = t; s < t + binMs; s += 1_000) {
      const b = byT.get(s);
      ok += b?.acquireOk ?? 0;
      failed += b?.acquireFailed ?? 0;
    }
    out.push({ t, ok, failed });
  }
  return out;
}

export type RttPoint = { t: number } & Record<`n${number}`, number | null>;
export function rttSeries(buckets: readonly HistoryBucket[], w: TimeWindow, nodeCount: number): RttPoint[] {
  const blank = (t: number): RttPoint => {
    const p: RttPoint = { t };
    for (let i = 1; i <= nodeCount; i++) p[`n${i}`] = null;
    return p;
  };
  const pts = buckets
    .filter((b) => b.t >= w.start && b.t <= w.end && b.rttMs !== null)
    .map((b) => {
      const p = blank(b.t);
      b.rttMs!.forEach((v, i) => {
        p[`n${i + 1}`] = v;
      });
      return p;
    });
  return sampled(pts, blank);
}

export interface LockCountPoint {
  t: number;
  held: number | null;
  expiring: number | null;
  partial: number | null;
  split: number | null;
  total: number | null;
}
export function lockCountSeries(buckets: readonly HistoryBucket[], w: TimeWindow): LockCountPoint[] {
  const pts = buckets
    .filter((b) => b.t >= w.start && b.t <= w.end && b.locks !== null)
    .map((b): LockCountPoint => ({
      t: b.t,
      total: b.locks,
      held: b.byState?.held ?? 0,
      expiring: b.byState?.expiring ?? 0,
      partial: b.byState?.partial ?? 0,
      split: b.byState?.split ?? 0,
    }));
  return sampled(pts, (t) => ({ t, held: null, expiring: null, partial: null, split: null, total: null }));
}

/** "12:03:45" for axis ticks and tooltips. */
export function clockLabel(t: number): string {
  return new Date(t).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
}

/** "12:03" for axis ticks on whole minutes, else "12:03:45". */
export function tickLabel(t: number): string {
  return t % 60_000 === 0 ? new Date(t).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', hour12: false }) : clockLabel(t);
}
