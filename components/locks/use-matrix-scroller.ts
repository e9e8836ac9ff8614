'use client';

import { useVirtualizer } from '@tanstack/react-virtual';
import { useCallback, useEffect, useRef } from 'react';
import type { WindowAnchor } from '@/lib/client/lock-queries';
import type { MatrixRowData } from './matrix-row';

/** The sticky column header's height: it sits above the rows inside the same scroller. */
export const HEADER_HEIGHT = 48;
/** Ask for the next page when the last rendered row is this close to the end of the loaded ones. */
const PREFETCH_ROWS = 250;

/**
 * The matrix's scroller: which rows are rendered (plus a loader row while pages are left), the
 * next page read well before the end, the live window moved to the first row on screen, and the
 * list started from the top when the filters change.
 */
export function useMatrixScroller({
  rows,
  rowHeight,
  filtersKey,
  hasNextPage,
  isFetchingNextPage,
  fetchNextPage,
  setAnchor,
}: {
  rows: readonly MatrixRowData[];
  rowHeight: number;
  filtersKey: string;
  hasNextPage: boolean;
  isFetchingNextPage: boolean;
  fetchNextPage: () => unknown;
  setAnchor: (anchor: WindowAnchor) => void;
}) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const count = rows.length + (hasNextPage ? 1 : 0);
  // Stable callbacks: the virtualizer recomputes every row's offset when one of them changes.
  const getItemKey = useCallback((index: number) => rows[index]?.view.key ?? '__more__', [rows]);
  const estimateSize = useCallback(() => rowHeight, [rowHeight]);
  const getScrollElement = useCallback(() => scrollRef.current, []);
  // TanStack Virtual hands back functions the React Compiler cannot memoize; it is only read here.
  // eslint-disable-next-line react-hooks/incompatible-library
  const virtualizer = useVirtualizer({
    count,
    getScrollElement,
    estimateSize,
    overscan: 10,
    // The sticky column header sits above the rows inside the same scroller.
    scrollMargin: HEADER_HEIGHT,
    scrollPaddingStart: HEADER_HEIGHT,
    getItemKey,
  });
  // Every cached row size was measured for the other layout.
  useEffect(() => virtualizer.measure(), [virtualizer, rowHeight]);
  const items = virtualizer.getVirtualItems();
  const lastIndex = items.length ? items[items.length - 1]!.index : 0;
  const firstIndex = items.length ? items[0]!.index : 0;

  useEffect(() => {
    // Well ahead of the end: the next page is read while the operator is still on this one.
    if (hasNextPage && !isFetchingNextPage && lastIndex >= rows.length - PREFETCH_ROWS) void fetchNextPage();
  }, [hasNextPage, isFetchingNextPage, lastIndex, rows.length, fetchNextPage]);

  // Re-read the rows on screen: the window starts just above the first rendered row.
  useEffect(() => {
    const timer = setTimeout(() => {
      const above = firstIndex > 0 ? rows[firstIndex - 1] : undefined;
      setAnchor(above ? { resource: above.view.resource, key: above.view.key } : null);
    }, 150);
    return () => clearTimeout(timer);
  }, [firstIndex, rows, setAnchor]);

  // New filters, new list: start it from the top.
  useEffect(() => {
    if (scrollRef.current) scrollRef.current.scrollTop = 0;
  }, [filtersKey]);

  return { scrollRef, virtualizer, items, firstIndex };
}
