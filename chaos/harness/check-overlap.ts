import { NS_PER_MS } from './history';
import { holdEnd, locksByResource, type LockRecord } from './locks';

export interface OverlapExample {
  resource: string;
  first: string;
  second: string;
  /** How long both held the resource, ms. */
  overlapMs: number;
}

export interface OverlapResult {
  /** Pairs of locks of different clients whose hold intervals on one resource intersect. */
  overlaps: number;
  examples: OverlapExample[];
}

const MAX_EXAMPLES = 10;

/**
 * Checker 1, mutual exclusion: the hold intervals [acquire ok, min(release invoke, validity end)]
 * of two different locks on one resource never intersect (every lock loop of a client process is
 * a holder of its own). Intervals are half-open: a hold that ends
 * at t and one that starts at t do not overlap. Empty intervals (no validity at the grant) hold
 * nothing; checker 3 reports them.
 */
export function checkOverlap(locks: Iterable<LockRecord>): OverlapResult {
  let overlaps = 0;
  const examples: OverlapExample[] = [];
  for (const [resource, list] of locksByResource(locks)) {
    // Sweep in start order, keeping the holds still open at the current start.
    let open: Array<{ rec: LockRecord; end: number }> = [];
    for (const rec of list) {
      const end = holdEnd(rec);
      if (end <= rec.ok) continue;
      open = open.filter((o) => o.end > rec.ok);
      for (const o of open) {
        overlaps++;
        if (examples.length < MAX_EXAMPLES) {
          examples.push({ resource, first: o.rec.lock, second: rec.lock, overlapMs: (Math.min(o.end, end) - rec.ok) / NS_PER_MS });
        }
      }
      open.push({ rec, end });
    }
  }
  return { overlaps, examples };
}
