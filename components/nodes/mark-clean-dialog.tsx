'use client';

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { NodeView } from '@/lib/api/nodes';
import { markNodeClean, opsKeys } from '@/lib/client/ops-queries';
import { queryKeys } from '@/lib/client/queries';
import type { Outcome } from './action-dialog';
import { Modal } from './modal';
import styles from './nodes.module.css';

/**
 * End a node's quarantine by hand. The operator vouches that the node holds no lock that was lost;
 * the server answers with a warning when the node restarted less than the lease ceiling ago, and
 * that warning is shown before the dialog closes.
 */
export function MarkCleanDialog({ node, maxTtlMs, onClose, onDone }: { node: NodeView; maxTtlMs: number; onClose: () => void; onDone: (o: Outcome) => void }) {
  const [reason, setReason] = useState('');
  const queryClient = useQueryClient();
  const mutation = useMutation({
    mutationFn: () => markNodeClean(node.id, reason.trim()),
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
  });
  const valid = reason.trim().length >= 3;
  const done = mutation.data;
  const recentRestart = node.uptimeMs !== null && node.uptimeMs < maxTtlMs;

  return (
    <Modal
      title={`Mark node ${node.id} clean?`}
      onClose={onClose}
      tone="warn"
      testId="mark-clean-dialog"
      footer={done ? (
        <button type="button" className="button button-primary" onClick={onClose}>Close</button>
      ) : (
        <>
          <button type="button" className="button" onClick={onClose}>Cancel</button>
          <button type="button" className="button button-primary" disabled={!valid || mutation.isPending} onClick={() => mutation.mutate()} data-testid="confirm-mark-clean">
            {mutation.isPending ? 'Marking…' : `Mark node ${node.id} clean`}
          </button>
        </>
      )}
    >
      {done ? (
        <div className={`${styles.verdictLine} ${done.warning ? styles.warn : styles.ok}`} role="status" data-testid="mark-clean-result">
          <span className={styles.verdictIcon} aria-hidden="true">{done.warning ? '!' : '✓'}</span>
          <div>
            <strong>Node {node.id} is marked clean and votes again.</strong>
            {done.warning ? <>Warning from the server: {done.warning}</> : 'No warning: it had been up longer than the lease ceiling.'}
          </div>
        </div>
      ) : (
        <>
          <p className={styles.lead}>
            {node.quarantine?.message ?? 'The node has no epoch sentinel.'} Marking it clean writes a fresh epoch sentinel, so it
            votes at once instead of waiting out the quarantine.
          </p>
          <div className={`${styles.verdictLine} ${recentRestart ? styles.bad : styles.warn}`}>
            <span className={styles.verdictIcon} aria-hidden="true">!</span>
            <div>
              <strong>Only if you know it lost no lock that is still valid</strong>
              The quarantine exists because a node that lost its data may have voted for a lock that is still held elsewhere. Letting it
              vote early can grant that resource to a second client.
              {recentRestart ? ` It has been up only ${Math.round((node.uptimeMs ?? 0) / 1000)} s, less than the lease ceiling (${maxTtlMs / 1000} s).` : ''}
            </div>
          </div>
          <label className={`${styles.field} ${styles.fieldWide}`}>
            Reason (recorded in the audit log)
            <textarea value={reason} onChange={(e) => setReason(e.target.value)} maxLength={500} required
              placeholder="e.g. fresh node, never served locks" aria-describedby="mark-clean-hint" />
            <span className={styles.hint} id="mark-clean-hint">At least 3 characters.</span>
          </label>
        </>
      )}
      {mutation.error ? <p className={styles.errorText} role="alert">Could not mark it clean: {mutation.error.message}</p> : null}
    </Modal>
  );
}
