'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { forceReleaseMany } from '@/lib/client/lock-queries';
import { queryKeys } from '@/lib/client/queries';
import { releaseItems, type PickedLock } from './lock-selection';

const PREVIEW_REASON = 'dry-run preview';

/**
 * A bulk force-release: one item per (lock, token) picked, their dry run (read once), the release,
 * how many items would delete, and the live holders among those (the release then says they were
 * confirmed; the server refuses the batch 409 otherwise). `onDone` runs as soon as results are in.
 */
export function useBulkRelease(locks: PickedLock[], reason: string, onDone?: () => void) {
  const queryClient = useQueryClient();
  const items = releaseItems(locks);
  const preview = useQuery({
    queryKey: queryKeys.bulkReleasePreview(items),
    queryFn: () => forceReleaseMany({ locks: items, reason: PREVIEW_REASON, dryRun: true }),
    staleTime: Number.POSITIVE_INFINITY,
    gcTime: 0,
    retry: false,
    refetchOnWindowFocus: false,
  });
  const willDelete = preview.data?.results.filter((r) => r.nodes.some((n) => n.outcome === 'would-delete')).length ?? 0;
  const live =
    preview.data?.results.filter((r) => r.liveness?.pulse === 'alive' && r.nodes.some((n) => n.outcome === 'would-delete')) ?? [];
  const release = useMutation({
    mutationFn: () =>
      forceReleaseMany({
        locks: items,
        reason: reason.trim(),
        dryRun: false,
        ...(live.length > 0 ? { confirmLiveHolders: true as const } : {}),
      }),
    // The released locks leave the selection as soon as the results are in: the page behind the
    // dialog never says "6 locks selected" over a table those locks have left.
    onSuccess: () => onDone?.(),
    onSettled: () => {
      void queryClient.invalidateQueries({ queryKey: queryKeys.locks });
      void queryClient.invalidateQueries({ queryKey: queryKeys.audit });
      for (const l of locks) void queryClient.invalidateQueries({ queryKey: queryKeys.lock(l.resource) });
    },
  });
  return { items, preview, release, willDelete, live };
}
