import 'server-only';
import type { HistoryBucket } from '../api/history';

/**
 * A rolling one-second-bucket window (10 minutes) of what the console saw: acquire outcomes and
 * latencies from the lock core's events, node RTTs and lock counts from the reads the console
 * already makes. Charts read it; nothing polls the nodes just to fill it.
 */
export type Sample =
  | { kind: 'acquire'; ok: boolean; durationMs: number; outcome: string }
  | { kind: 'nodes'; rttMs: Array<number | null> }
  | { kind: 'locks'; total: number; byState: Record<string, number> };

export type { HistoryBucket } from '../api/history';

interface Bucket {
  t: number;
  ok: number;
  failed: number;
  durations: number[];
  rtt: Array<number | null> | null;
  locks: number | null;
  byState: Record<string, number> | null;
}

const WINDOW_S = 600;
const MAX_DURATIONS_PER_BUCKET = 2_000;
const KEY = Symbol.for('redlock-console.history');
type Holder = { [KEY]?: Bucket[] };

function buckets(): Bucket[] {
  const holder = globalThis as Holder;
  holder[KEY] ??= [];
  return holder[KEY];
}

function current(now: number): Bucket {
  const list = buckets();
  const t = Math.floor(now / 1000) * 1000;
  let last = list.at(-1);
  if (!last || last.t !== t) {
    last = { t, ok: 0, failed: 0, durations: [], rtt: null, locks: null, byState: null };
    list.push(last);
    while (list.length && list[0]!.t < t - WINDOW_S * 1000) list.shift();
  }
  return last;
}

export function recordSample(sample: Sample, now = Date.now()): void {
  const b = current(now);
  if (sample.kind === 'acquire') {
    if (sample.ok) b.ok++;
    else b.failed++;
    if (b.durations.length < MAX_DURATIONS_PER_BUCKET) b.durations.push(sample.durationMs);
  } else if (sample.kind === 'nodes') {
    b.rtt = sample.rttMs;
  } else {
    b.locks = sample.total;
    b.byState = sample.byState;
  }
}

/** The window, oldest first, with latency percentiles per bucket. */
export function readHistory(sinceMs = Date.now() - WINDOW_S * 1000): HistoryBucket[] {
  return buckets()
    .filter((b) => b.t >= sinceMs)
    .map((b) => {
      const sorted = [...b.durations].sort((x, y) => x - y);
      const pick = (q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : null);
      return {
        t: b.t,
        acquireOk: b.ok,
        acquireFailed: b.failed,
        p50Ms: pick(0.5),
        p99Ms: pick(0.99),
        rttMs: b.rtt,
        locks: b.locks,
        byState: b.byState,
      };
    });
}
