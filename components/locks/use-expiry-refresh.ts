'use client';

import { useQueryClient } from '@tanstack/react-query';
import { useCallback, useRef, type RefObject } from 'react';
import { queryKeys } from '@/lib/client/queries';
import { useCountdowns } from './countdown';
import type { SortKey } from './matrix-options';

/**
 * The countdowns inside `section`, and a re-read (at most once a second) when one runs out: the
 * live window when sorted by resource, the whole list when it is small enough to refetch.
 */
export function useExpiryRefresh(section: RefObject<HTMLElement | null>, sort: SortKey, smallList: boolean, refetch: () => unknown) {
  const queryClient = useQueryClient();
  const lastExpireRefresh = useRef(0);
  const onExpire = useCallback(() => {
    if (Date.now() - lastExpireRefresh.current < 1_000) return;
    lastExpireRefresh.current = Date.now();
    if (sort === 'resource') void queryClient.invalidateQueries({ queryKey: queryKeys.locksWindow });
    else if (smallList) void refetch();
  }, [queryClient, sort, smallList, refetch]);
  useCountdowns(section, onExpire);
}
