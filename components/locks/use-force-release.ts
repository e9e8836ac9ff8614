'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { forceRelease } from '@/lib/client/lock-queries';
import { queryKeys } from '@/lib/client/queries';

const PREVIEW_REASON = 'dry-run preview';

/**
 * One lock's force-release: the dry run of `token` (read once, never refetched behind the
 * operator's back), the release itself, how many nodes the dry run would delete on, and whether
 * the holder is alive (the release then says it was confirmed; the API refuses it otherwise).
 */
export function useForceRelease(resource: string, token: string, reason: string) {
  const queryClient = useQueryClient();
  const preview = useQuery({
    queryKey: queryKeys.forceReleasePreview(resource, token),
    queryFn: () => forceRelease(resource, { token, reason: PREVIEW_REASON, dryRun: true }),
    staleTime: Number.POSITIVE_INFINITY,
    gcTime: 0,
    retry: false,
    refetchOnWindowFocus: false,
  });
  const wouldDelete = preview.data?.nodes.filter((n) => n.outcome === 'would-delete').length ?? 0;
  // A live holder (it extends at its pace) takes one more confirmation; the API refuses without it.
  const holderAlive = preview.data?.liveness?.pulse === 'alive' && wouldDelete > 0;
  const release = useMutation({
    mutationFn: () =>
      forceRelease(resource, { token, reason: reason.trim(), dryRun: false, ...(holderAlive ? { confirmLiveHolder: true as const } : {}) }),
    onSettled: () => {
      void queryClient.invalidateQueries({ queryKey: queryKeys.locks });
      void queryClient.invalidateQueries({ queryKey: queryKeys.lock(resource) });
      void queryClient.invalidateQueries({ queryKey: queryKeys.audit });
    },
  });
  return { preview, release, wouldDelete, holderAlive };
}
