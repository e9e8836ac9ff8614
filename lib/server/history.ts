import 'server-only';
import type { HistoryBucket, HistoryResolution } from '../api/history';
import type { LockState } from '../inspect/quorum-view';
import { HISTORY_TIERS } from '../api/history';

/**
 * What the console saw, in two rolling windows: one-second buckets for ten minutes and one-minute
 * buckets for 24 hours (HISTORY_TIERS). Acquire outcomes and latencies come from the lock core's
 * events, node RTTs and lock counts from the reads the console makes, and from the sampler
 * (history-sampler.ts), which reads them every few seconds when no screen does, so the charts
 * have no holes just because nobody was looking. A bucket nothing was read in stays empty: the
 * charts draw it as a gap, not as zero.
 */
export type Sample =
  | { kind: 'acquire'; ok: boolean; durationMs: number; outcome: string }
  | { kind: 'grant' }
  | { kind: 'nodes'; rttMs: Array<number | null> }
  | { kind: 'locks'; total: number; byState: Record<LockState, number> };

export type { HistoryBucket } from '../api/history';

interface Bucket {
  t: number;
  ok: number;
  failed: number;
  /** Grants seen on the masters (grants-seen.ts); null while they were not counted. */
  grants: number | null;
  durations: number[];
  rtt: Array<number | null> | null;
  locks: number | null;
  byState: Record<LockState, number> | null;
}

/** Latencies kept per bucket for its percentiles (a reservoir would be fairer; the first N are plenty for a chart). */
const MAX_DURATIONS_PER_BUCKET = 2_000;
type Tiers = Record<HistoryResolution, Bucket[]> & { lastSample: { nodes: number; locks: number }; countingGrants: boolean };
let kept: Tiers | undefined;

function tiers(): Tiers {
  kept ??= { '1s': [], '1m': [], lastSample: { nodes: 0, locks: 0 }, countingGrants: false };
  return kept;
}

function current(resolution: HistoryResolution, now: number): Bucket {
  const { bucketMs, windowMs } = HISTORY_TIERS[resolution];
  const list = tiers()[resolution];
  const t = Math.floor(now / bucketMs) * bucketMs;
  let last = list.at(-1);
  if (!last || last.t !== t) {
    last = { t, ok: 0, failed: 0, grants: tiers().countingGrants ? 0 : null, durations: [], rtt: null, locks: null, byState: null };
    list.push(last);
    while (list.length && list[0]!.t < t - windowMs) list.shift();
  }
  return last;
}

export function recordSample(sample: Sample, now = Date.now()): void {
  for (const resolution of ['1s', '1m'] as const) {
    const b = current(resolution, now);
    if (sample.kind === 'grant') b.grants = (b.grants ?? 0) + 1;
    else if (sample.kind === 'acquire') {
      if (sample.ok) b.ok++;
      else b.failed++;
      if (b.durations.length < MAX_DURATIONS_PER_BUCKET) b.durations.push(sample.durationMs);
    } else if (sample.kind === 'nodes') {
      // A minute shows its latest reading (RTTs and lock counts are levels, not sums).
      b.rtt = sample.rttMs;
    } else {
      b.locks = sample.total;
      b.byState = sample.byState;
    }
  }
  if (sample.kind === 'nodes' || sample.kind === 'locks') tiers().lastSample[sample.kind] = now;
}

/** Grants are being counted from now on (a bucket started while they are says 0, not null, when it saw none). */
export function setCountingGrants(on: boolean, now = Date.now()): void {
  tiers().countingGrants = on;
  if (!on) return;
  for (const resolution of ['1s', '1m'] as const) {
    const b = current(resolution, now);
    b.grants ??= 0;
  }
}

/** When a reading of this kind was last recorded (ms since epoch, 0: never): the sampler skips what a screen just read. */
export function lastSampleAt(kind: 'nodes' | 'locks'): number {
  return tiers().lastSample[kind];
}

/** A window, oldest first, with latency percentiles per bucket. */
export function readHistory(resolution: HistoryResolution = '1s', sinceMs?: number, now = Date.now()): HistoryBucket[] {
  const since = sinceMs ?? now - HISTORY_TIERS[resolution].windowMs;
  return tiers()
    [resolution].filter((b) => b.t >= since)
    .map((b) => {
      const sorted = [...b.durations].sort((x, y) => x - y);
      const pick = (q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : null);
      return {
        t: b.t,
        acquireOk: b.ok,
        acquireFailed: b.failed,
        grantsSeen: b.grants,
        p50Ms: pick(0.5),
        p99Ms: pick(0.99),
        rttMs: b.rtt,
        locks: b.locks,
        byState: b.byState,
      };
    });
}

/** Forget everything (tests). */
export function resetHistory(): void {
  kept = undefined;
}
