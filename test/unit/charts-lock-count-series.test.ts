import { describe, expect, it } from 'vitest';
import type { HistoryBucket } from '@/lib/client/queries';
import { lockCountSeries } from '@/components/charts/series';
import { STATE_ORDER } from '@/components/locks/lock-state';

const bucket = (t: number, locks: number | null, byState: HistoryBucket['byState']): HistoryBucket => ({
  t,
  acquireOk: 0,
  acquireFailed: 0,
  grantsSeen: null,
  p50Ms: null,
  p99Ms: null,
  rttMs: null,
  locks,
  byState,
});

describe('the lock-count chart series', () => {
  it('carries every lock state of each reading, 0 for a state with no locks, and a gap as nulls', () => {
    const points = lockCountSeries(
      [bucket(1_000, 7, { held: 4, expiring: 1, partial: 2, split: 0 }), bucket(60_000, 3, { held: 3, expiring: 0, partial: 0, split: 0 })],
      { start: 0, end: 120_000, bucketMs: 1_000 },
    );
    expect(points[0]).toEqual({ t: 1_000, total: 7, held: 4, expiring: 1, partial: 2, split: 0 });
    // The minute without readings is a gap: one blank point, every state null.
    expect(points[1]).toEqual({ t: 2_000, total: null, ...Object.fromEntries(STATE_ORDER.map((s) => [s, null])) });
    expect(points[2]).toMatchObject({ t: 60_000, total: 3, held: 3 });
    expect(Object.keys(points[0]!).sort()).toEqual(['t', 'total', ...STATE_ORDER].sort());
  });
});
