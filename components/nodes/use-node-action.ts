'use client';

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import type { NodeAction } from '@/lib/api/node-actions';
import type { NodeView } from '@/lib/api/nodes';
import { opsKeys, runNodeAction } from '@/lib/client/ops-queries';
import { queryKeys } from '@/lib/client/queries';
import { formatTime } from '../ui/format';
import { ACTIONS, type ActionKind, type Outcome } from './actions';

/**
 * Runs a node action: the lock list under the blast radius read again as the dialog opens; once
 * done, everything the action changes read again and the outcome said in one line.
 */
export function useNodeAction(node: NodeView, kind: ActionKind, request: () => NodeAction, onDone: (outcome: Outcome) => void) {
  const spec = ACTIONS[kind];
  const queryClient = useQueryClient();
  // The blast radius is only as good as the lock list under it: read it again as the dialog opens.
  useEffect(() => {
    void queryClient.refetchQueries({ queryKey: opsKeys.lockHolders });
  }, [queryClient]);
  return useMutation({
    mutationFn: () => runNodeAction(node.id, request()),
    onSuccess: async (res) => {
      await Promise.all([
        queryClient.invalidateQueries({ queryKey: queryKeys.nodes }),
        queryClient.invalidateQueries({ queryKey: opsKeys.all }),
        queryClient.invalidateQueries({ queryKey: queryKeys.locks }),
        queryClient.invalidateQueries({ queryKey: queryKeys.audit }),
      ]);
      const restartNote = res.node.restartAt ? `, restarts at ${formatTime(res.node.restartAt)}` : '';
      onDone({
        tone: spec.effect === 'restores' ? 'ok' : 'warn',
        text: `node ${node.id}: ${kind} done — process ${res.node.state}${restartNote}. Written to the audit log.`,
      });
    },
  });
}
