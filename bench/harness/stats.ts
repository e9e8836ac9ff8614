/**
 * Statistics of the benchmark: percentiles of one run's samples, min / median / max over runs,
 * and ratios computed run by run (both sides measured in the same run, so a load spike on the
 * shared machine moves both).
 */

/** min / median / max over the runs, and the per-run values themselves. */
export interface Figure {
  min: number;
  median: number;
  max: number;
  runs: number[];
}

/** A growable buffer of numbers (latency samples in ms) without a boxed array per sample. */
export class Samples {
  private data = new Float64Array(1024);
  length = 0;

  push(value: number): void {
    if (this.length === this.data.length) {
      const next = new Float64Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = value;
  }

  /** Add every sample of `other` (or of `other.samples`). */
  append(other: Samples | { samples: Samples }): void {
    const from = other instanceof Samples ? other : other.samples;
    for (let i = 0; i < from.length; i++) this.push(from.data[i]!);
  }

  /** The samples, sorted ascending (a copy). */
  sorted(): Float64Array {
    return this.data.slice(0, this.length).sort();
  }
}

/** Nearest-rank percentile (p in 0…100) of ascending values; NaN when there are none. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

/** min / median / max of per-run values (NaN runs, e.g. a peer that hung, are left out). */
export function figure(runs: readonly number[]): Figure {
  const values = runs.filter((v) => Number.isFinite(v));
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return { min: Number.NaN, median: Number.NaN, max: Number.NaN, runs: [...runs] };
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { min: sorted[0]!, median, max: sorted[sorted.length - 1]!, runs: [...runs] };
}

/** Per-run ratios a[i] / b[i]. */
export function ratios(a: readonly number[], b: readonly number[]): number[] {
  return a.map((value, i) => value / b[i]!);
}

/** Rounds for JSON and tables: 3 significant digits below 100, whole numbers above. */
export function round(value: number): number {
  if (!Number.isFinite(value)) return value;
  if (Math.abs(value) >= 100) return Math.round(value);
  return Number(value.toPrecision(3));
}

/** Shuffles a copy (Fisher–Yates): the order of the peers within a run is random. */
export function shuffled<T>(items: readonly T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}
