'use client';

import { keepPreviousData, queryOptions } from '@tanstack/react-query';
import { slotHistoryResponseSchema } from '@/lib/api/slot-history';
import type { SlotKind } from '@/lib/api/slot-locks';
import { fetchJson } from '@/lib/client/fetch-json';
import { slotQueryKeys } from './slot-queries';

/**
 * The merged history of some slots of one semaphore or read-write lock, under the lock's key: a
 * force-release from its page (which invalidates every slot-lock query) reads it again at once.
 * Every 3 s otherwise (each slot is a history read per master); a change of slots keeps the rows
 * shown until the new ones arrive.
 */
export const slotHistoryQuery = (kind: SlotKind, resource: string, slots: readonly number[]) =>
  queryOptions({
    queryKey: [...slotQueryKeys.one(kind, resource), 'history', slots.join(',')] as const,
    queryFn: ({ signal }) =>
      fetchJson(
        `/api/slot-locks/${kind}/${encodeURIComponent(resource)}/history?slots=${slots.join(',')}&limit=32`,
        slotHistoryResponseSchema,
        { signal },
      ),
    refetchInterval: 3_000,
    placeholderData: keepPreviousData,
  });
