import type { HistoryBucket } from '@/lib/client/queries';
import { STATE_ORDER, type LockStateName } from '../locks/lock-state';

/**
 * A gap longer than this between two readings of one-second buckets breaks a line instead of
 * drawing across it: three times the server's sampler period (history-sampler.ts), so a console
 * nobody looks at still draws whole lines, and a real outage shows as a gap.
 */
export const GAP_MS = 15_000;

/** The gap that breaks a line, for buckets of `bucketMs`. */
export function gapFor(bucketMs: number): number {
  return Math.max(GAP_MS, 3 * bucketMs);
}

export interface TimeWindow {
  start: number;
  end: number;
  /** The size of the server's buckets behind it (1 s, or 1 min for windows over 10 minutes). */
  bucketMs: number;
}

/** The window the charts show: `spanMs` back from the newest bucket (server time). */
export function windowOf(buckets: readonly HistoryBucket[], spanMs: number, fallbackEnd: number, bucketMs = 1_000): TimeWindow {
  const end = buckets.at(-1)?.t ?? Math.floor(fallbackEnd / bucketMs) * bucketMs;
  return { start: end - spanMs, end, bucketMs };
}

/** Round tick positions inside the window, about five to eight of them whatever its span. */
export function timeTicks(w: TimeWindow): number[] {
  const span = w.end - w.start;
  const step =
    span <= 60_000
      ? 15_000
      : span <= 300_000
        ? 60_000
        : span <= 600_000
          ? 120_000
          : span <= 3_600_000
            ? 600_000
            : span <= 21_600_000
              ? 3_600_000
              : 14_400_000;
  const ticks: number[] = [];
  for (let t = Math.ceil(w.start / step) * step; t <= w.end; t += step) ticks.push(t);
  return ticks;
}

/**
 * Points of a sampled series: only the buckets that have a reading, plus an all-null point inside
 * every gap longer than `gapMs`, so the line breaks where nothing was read rather than inventing a
 * straight line across minutes nobody measured.
 */
export function sampled<P extends { t: number }>(points: readonly P[], blank: (t: number) => P, gapMs = GAP_MS, bucketMs = 1_000): P[] {
  const out: P[] = [];
  let prev: P | undefined;
  for (const p of points) {
    if (prev && p.t - prev.t > gapMs) out.push(blank(prev.t + bucketMs));
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
  return sampled(pts, (t) => ({ t, p50: null, p99: null, n: 0 }), gapFor(w.bucketMs), w.bucketMs);
}

/** The span of one bar of the outcomes chart: 60 to 120 bars whatever the window, so a bar stays wide enough to see. */
export function outcomeBinMs(w: TimeWindow): number {
  const span = w.end - w.start;
  const bin = span <= 60_000 ? 1_000 : span <= 600_000 ? 5_000 : span <= 3_600_000 ? 60_000 : span <= 21_600_000 ? 300_000 : 1_200_000;
  return Math.max(bin, w.bucketMs);
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
  const start = Math.floor((w.start + w.bucketMs) / binMs) * binMs;
  for (let t = start; t <= w.end; t += binMs) {
    if (t + binMs - w.bucketMs < first) {
      out.push({ t, ok: null, failed: null });
      continue;
    }
    let ok = 0;
    let failed = 0;
    for (let s = t; s < t + binMs; s += w.bucketMs) {
      const b = byT.get(s);
      ok += b?.acquireOk ?? 0;
      failed += b?.acquireFailed ?? 0;
    }
    out.push({ t, ok, failed });
  }
  return out;
}

export interface GrantPoint {
  t: number;
  /** Grants seen on the masters in the bin (any client); null where they were not counted. */
  seen: number | null;
  /** Null because no master could be read (rather than because the counter was not running). */
  unread?: true;
}
/**
 * Grants seen on the masters per bin (the same bins as outcomeSeries). From the first bucket that
 * counted them, a bin without a bucket is a measured zero; a bin with a bucket that did not count
 * them (the counter was not running) or before the first is null: "not counted" is never drawn as 0.
 * Nor is "not read": while the console's readings of the masters found none answering (every RTT
 * null, until a reading finds one), a notification could not have reached it either, so those
 * seconds count nothing and a bin made only of them is null.
 */
export function grantSeries(buckets: readonly HistoryBucket[], w: TimeWindow, binMs = outcomeBinMs(w)): GrantPoint[] {
  const first = buckets.find((b) => b.grantsSeen !== null)?.t ?? Number.POSITIVE_INFINITY;
  const byT = new Map(buckets.map((b) => [b.t, b]));
  // The masters' readings in time order: unread when no node answered.
  const readings = buckets.filter((b) => b.rttMs !== null).map((b) => ({ t: b.t, unread: b.rttMs!.every((v) => v === null) }));
  let next = 0;
  let unread = false;
  const out: GrantPoint[] = [];
  const start = Math.floor((w.start + w.bucketMs) / binMs) * binMs;
  for (let t = start; t <= w.end; t += binMs) {
    let seen = 0;
    let uncounted = false;
    let counted = false;
    let blind = false;
    for (let s = t; s < t + binMs; s += w.bucketMs) {
      while (next < readings.length && readings[next]!.t <= s) unread = readings[next++]!.unread;
      if (s < first) continue;
      const b = byT.get(s);
      if (unread || (b && b.grantsSeen === null)) {
        uncounted = true;
        blind ||= unread;
        continue;
      }
      counted = true;
      seen += b?.grantsSeen ?? 0;
    }
    if (counted && (seen > 0 || !uncounted)) out.push({ t, seen });
    else out.push(blind ? { t, seen: null, unread: true } : { t, seen: null });
  }
  return out;
}

/**
 * What the grants line knows over the window: how many bins it counted, and how many it could not
 * because no master could be read. The chart's words follow it, so an empty chart says "could not
 * read" rather than "no grants".
 */
export function grantKnowledge(points: readonly GrantPoint[]): { known: number; unread: number } {
  return { known: points.filter((p) => p.seen !== null).length, unread: points.filter((p) => p.unread).length };
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
  return sampled(pts, blank, gapFor(w.bucketMs), w.bucketMs);
}

/** Locks counted by state at one time (every state of STATE_ORDER), and their total. */
export type LockCountPoint = { t: number; total: number | null } & Record<LockStateName, number | null>;
export function lockCountSeries(buckets: readonly HistoryBucket[], w: TimeWindow): LockCountPoint[] {
  const pts = buckets
    .filter((b) => b.t >= w.start && b.t <= w.end && b.locks !== null)
    .map((b) => lockCountPoint(b.t, b.locks, (state) => b.byState?.[state] ?? 0));
  return sampled(pts, (t) => lockCountPoint(t, null, () => null), gapFor(w.bucketMs), w.bucketMs);
}

function lockCountPoint(t: number, total: number | null, count: (state: LockStateName) => number | null): LockCountPoint {
  return { t, total, ...(Object.fromEntries(STATE_ORDER.map((state) => [state, count(state)])) as Record<LockStateName, number | null>) };
}

/** "12:03:45" for axis ticks and tooltips. */
export function clockLabel(t: number): string {
  return new Date(t).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
}

/** "12:03" for axis ticks on whole minutes, else "12:03:45". */
export function tickLabel(t: number): string {
  return t % 60_000 === 0 ? new Date(t).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', hour12: false }) : clockLabel(t);
}
