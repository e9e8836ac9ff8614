'use client';

import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { historyQuery, type HistoryBucket } from '@/lib/client/queries';
import { HISTORY_TIERS, type HistoryResolution, type HistoryResponse } from '@/lib/api/history';
import { timeTicks, windowOf, type TimeWindow } from './series';
import type { LoadingState } from './chart-card';

/** What every chart reads: the buckets in the window, the window and its ticks, and whether the history was read. */
export interface HistoryWindow {
  buckets: readonly HistoryBucket[];
  w: TimeWindow;
  ticks: number[];
  /** Loading, read, or not read (nothing yet, or an error). */
  base: LoadingState;
  errorText: string | null;
  grants: HistoryResponse['grants'] | undefined;
}

/** The server's history at the resolution the window needs, placed in a window `span` long ending at the last bucket. */
export function useHistoryWindow(span: number, resolution: HistoryResolution): HistoryWindow {
  const bucketMs = HISTORY_TIERS[resolution].bucketMs;
  const { data, error, isPending, dataUpdatedAt } = useQuery(historyQuery(resolution));
  const buckets: readonly HistoryBucket[] = useMemo(() => data?.buckets ?? [], [data]);
  const w = useMemo(() => windowOf(buckets, span, dataUpdatedAt, bucketMs), [buckets, span, dataUpdatedAt, bucketMs]);
  const base: LoadingState = isPending ? 'loading' : data ? 'ready' : error ? 'error' : 'empty';
  const errorText = !data && error ? error.message : null;
  return { buckets, w, ticks: timeTicks(w), base, errorText, grants: data?.grants };
}

/** A chart's state: the history's, or empty when the history was read and has nothing for this chart. */
export function chartState(base: LoadingState, has: boolean): LoadingState {
  return base !== 'ready' ? base : has ? 'ready' : 'empty';
}
