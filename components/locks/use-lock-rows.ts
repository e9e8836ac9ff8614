'use client';

import { keepPreviousData, useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { useCallback, useEffect, useMemo, useState } from 'react';
import { filtersKey, lockWindowQuery, preloadLockPage, takePreloadedLockPage, type WindowAnchor } from '@/lib/client/lock-queries';
import { lockListUrl, locksInfiniteQuery, nodesQuery, type LockListPage } from '@/lib/client/queries';
import type { MatrixRowData } from './matrix-row';
import { filtersFromParams, sortRows, type useMatrixOptions } from './matrix-options';
import { mergeWindow, t0Of } from './window-merge';

const PAGE_SIZE = 500;
/** Rows re-read every second around the first one on screen. */
const WINDOW_SIZE = 60;
/** Below this many loaded rows, a sort other than by resource simply refetches everything. */
const SMALL_LIST = 1_000;

// Loading this screen's code on /locks starts reading the first page right away (see preloadLockPage).
if (typeof window !== 'undefined' && window.location.pathname === '/locks') {
  preloadLockPage(lockListUrl(filtersFromParams(new URLSearchParams(window.location.search)), null, PAGE_SIZE, true));
}

type MatrixOptions = ReturnType<typeof useMatrixOptions>;

/**
 * The Locks rows: the pages read for these filters, patched by the live window re-read around the
 * first row on screen (sorted by resource), in the chosen sort. `setAnchor` moves that window;
 * `nodeIds` and `labels` name the matrix's columns.
 */
export function useLockRows({ filters, sort }: Pick<MatrixOptions, 'filters' | 'sort'>) {
  const currentFiltersKey = filtersKey(filters);
  const pagesOptions = locksInfiniteQuery(filters, PAGE_SIZE);
  const pagesQuery = useInfiniteQuery({
    ...pagesOptions,
    queryFn: (context) => {
      // The page read when this code loaded, if it is for these filters; a failed one (before
      // signing in, say) is simply asked again.
      const early = context.pageParam === null ? takePreloadedLockPage(lockListUrl(filters, null, PAGE_SIZE, true)) : null;
      return early ? early.catch(() => pagesOptions.queryFn!(context)) : pagesOptions.queryFn!(context);
    },
    placeholderData: keepPreviousData,
    gcTime: 5_000,
  });
  const pages = pagesQuery.data?.pages;
  // Node addresses for the column titles: asked for once the first rows are in, so the node
  // health read never competes with the scan the operator is waiting for.
  const { data: nodesInfo } = useQuery({ ...nodesQuery(), enabled: !!pages });
  const baseRows = useMemo(() => {
    const out: MatrixRowData[] = [];
    for (const page of pages ?? []) {
      const t0 = t0Of(page);
      for (const view of page.items) out.push({ view, t0 });
    }
    return out;
  }, [pages]);

  // Where the live window starts, for the filters it was chosen under (other filters: the top).
  const [anchorState, setAnchorState] = useState<{ filters: string; anchor: WindowAnchor }>({ filters: '', anchor: null });
  const anchor = anchorState.filters === currentFiltersKey ? anchorState.anchor : null;
  // An early first page (scan still running) is refetched whole until complete: no window over it.
  const scanning = pages?.[0]?.complete === false;
  const liveWindow = sort === 'resource' && !!pages && !pagesQuery.isPlaceholderData && !scanning;
  const windowQuery = useQuery(lockWindowQuery(filters, anchor, WINDOW_SIZE, liveWindow));
  const win = liveWindow && windowQuery.data?.filtersKey === currentFiltersKey ? windowQuery.data : null;
  const merged = useMemo(() => (win ? mergeWindow(baseRows, win) : baseRows), [baseRows, win]);
  const rows = useMemo(() => sortRows(merged, sort), [merged, sort]);

  const lastPage: LockListPage | undefined = pages?.[pages.length - 1];
  const latest: LockListPage | undefined = win && (!lastPage || win.receivedAt >= lastPage.receivedAt) ? win : lastPage;
  const refreshing = pagesQuery.isPlaceholderData;

  // Other sorts cannot patch a window (rows on screen are not one run of resources): a small list
  // refetches whole every 2 s, a large one stays the snapshot it is and says so.
  const smallList = baseRows.length <= SMALL_LIST;
  const { refetch } = pagesQuery;
  useEffect(() => {
    if (sort === 'resource' || !smallList) return;
    const timer = setInterval(() => void refetch(), 2_000);
    return () => clearInterval(timer);
  }, [sort, smallList, refetch]);

  // The live window starts just below `next` (null: the top), for these filters.
  const setAnchor = useCallback(
    (next: WindowAnchor) =>
      setAnchorState((current) =>
        current.filters === currentFiltersKey && current.anchor?.resource === next?.resource && current.anchor?.key === next?.key
          ? current
          : { filters: currentFiltersKey, anchor: next },
      ),
    [currentFiltersKey],
  );

  // The same array as long as the node ids stay the same, so memoized rows do not re-render.
  const nodeIdList = (latest?.nodes.map((n) => n.node) ?? nodesInfo?.nodes.map((n) => n.id) ?? []).join(',');
  const nodeIds = useMemo(() => (nodeIdList ? nodeIdList.split(',').map(Number) : [1, 2, 3, 4, 5]), [nodeIdList]);
  const labels = useMemo(() => new Map(nodesInfo?.nodes.map((n) => [n.id, n.label]) ?? []), [nodesInfo]);

  return { currentFiltersKey, pagesQuery, pages, nodeIds, labels, baseRows, rows, latest, scanning, refreshing, smallList, setAnchor };
}
