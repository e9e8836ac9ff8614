'use client';

import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { NodeView } from '@/lib/api/nodes';
import { ApiError } from '@/lib/client/fetch-json';
import { markNodeClean, opsKeys } from '@/lib/client/ops-queries';
import { queryKeys } from '@/lib/client/queries';
import type { Outcome } from './actions';
import { seenOf } from './mark-clean-sentinel';

/**
 * Marks `node` clean against the sentinel the operator judged: on success everything it changes is
 * read again, and without a server warning the dialog closes with its outcome; a 409 (the node
 * changed) reads the nodes again so the operator can look again.
 */
export function useMarkClean(node: NodeView, judged: NodeView, reason: string, onDone: (o: Outcome) => void, onClose: () => void) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => markNodeClean(node.id, reason.trim(), seenOf(judged)),
    onSuccess: async (res) => {
      await Promise.all([
        queryClient.invalidateQueries({ queryKey: queryKeys.nodes }),
        queryClient.invalidateQueries({ queryKey: opsKeys.all }),
        queryClient.invalidateQueries({ queryKey: queryKeys.audit }),
      ]);
      if (!res.warning) {
        onDone({ tone: 'ok', text: `node ${node.id} marked clean: it votes again. Written to the audit log.` });
        onClose();
      }
    },
    onError: (err) => {
      if (err instanceof ApiError && err.status === 409) void queryClient.invalidateQueries({ queryKey: queryKeys.nodes });
    },
  });
}
