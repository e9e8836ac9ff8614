'use client';

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { NodeView, SeenSentinel } from '@/lib/api/nodes';
import { ApiError } from '@/lib/client/fetch-json';
import { markNodeClean, opsKeys } from '@/lib/client/ops-queries';
import { queryKeys } from '@/lib/client/queries';
import type { Outcome } from './actions';
import { Modal } from './modal';
import { quarantineWhy } from './node-state';
import styles from './nodes.module.css';

/** The sentinel the operator is judging, as the server compares it (null: none to compare, e.g. an old sentinel without a process). */
function seenOf(node: NodeView): SeenSentinel | undefined {
  const q = node.quarantine;
  if (!q || q.state === 'unknown') return { runId: null };
  return q.runId ? { runId: q.runId, ...(q.createdAt !== null ? { createdAt: q.createdAt } : {}) } : undefined;
}

/** A message as a sentence of its own: capitalised, with its full stop. */
const sentence = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}${/[.!?]$/.test(text) ? '' : '.'}`;

const sameSentinel = (a: NodeView, b: NodeView) =>
  (a.quarantine?.runId ?? null) === (b.quarantine?.runId ?? null) &&
  (a.quarantine?.createdAt ?? null) === (b.quarantine?.createdAt ?? null) &&
  a.runId === b.runId;

/**
 * End a node's quarantine by hand. The operator vouches that the node holds no lock that was lost,
 * judging the node as the dialog shows it when it opened: the server applies the mark only to that
 * sentinel (a compare-and-set) and refuses with 409 when the node restarted or lost its data again
 * in between; then the dialog asks the operator to look again. The warning (a restart or data loss
 * within the lease ceiling) is shown before the click, and the server's after it.
 */
export function MarkCleanDialog({
  node,
  maxTtlMs,
  onClose,
  onDone,
}: {
  node: NodeView;
  maxTtlMs: number;
  onClose: () => void;
  onDone: (o: Outcome) => void;
}) {
  const [reason, setReason] = useState('');
  const [judged, setJudged] = useState(node);
  const queryClient = useQueryClient();
  const mutation = useMutation({
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
  const valid = reason.trim().length >= 3;
  const done = mutation.data;
  const changed = mutation.error instanceof ApiError && mutation.error.status === 409 ? mutation.error : null;
  // The node's reading moved on while the dialog was open: what is judged is no longer what is there.
  const drifted = !done && !sameSentinel(node, judged);
  // "Look again" and the confirm button are separate elements (keys): a click already on its way
  // to one never lands on the other through React reusing the DOM node.
  const lookAgain = () => {
    setJudged(node);
    mutation.reset();
  };
  const why = quarantineWhy(judged);
  const warning =
    judged.quarantine?.markCleanWarning ??
    (judged.uptimeMs !== null && judged.uptimeMs < maxTtlMs
      ? `it has been up only ${Math.round(judged.uptimeMs / 1000)} s, less than the lease ceiling (${maxTtlMs / 1000} s)`
      : null);

  return (
    <Modal
      title={`Mark node ${node.id} clean?`}
      onClose={onClose}
      tone="warn"
      testId="mark-clean-dialog"
      footer={
        done ? (
          <button type="button" className="button button-primary" onClick={onClose}>
            Close
          </button>
        ) : (
          <>
            <button type="button" className="button" onClick={onClose}>
              Cancel
            </button>
            {changed || drifted ? (
              <button
                key="look-again"
                type="button"
                className="button button-primary"
                onClick={lookAgain}
                data-testid="mark-clean-look-again"
              >
                Look again
              </button>
            ) : (
              <button
                key="confirm"
                type="button"
                className="button button-primary"
                disabled={!valid || mutation.isPending}
                onClick={() => mutation.mutate()}
                data-testid="confirm-mark-clean"
              >
                {mutation.isPending ? 'Marking…' : `Mark node ${node.id} clean`}
              </button>
            )}
          </>
        )
      }
    >
      {done ? (
        <div className={`${styles.verdictLine} ${done.warning ? styles.warn : styles.ok}`} role="status" data-testid="mark-clean-result">
          <span className={styles.verdictIcon} aria-hidden="true">
            {done.warning ? '!' : '✓'}
          </span>
          <div>
            <strong>Node {node.id} is marked clean and votes again.</strong>
            {done.warning ? <>Warning from the server: {done.warning}</> : 'No warning: no restart or data loss within the lease ceiling.'}
          </div>
        </div>
      ) : (
        <>
          <p className={styles.lead} data-testid="mark-clean-judged">
            {why ? (
              <>
                <strong>{why.label}</strong> ({why.detail}).{' '}
              </>
            ) : null}
            {sentence(judged.quarantine?.message ?? 'The node has no epoch sentinel')} Marking it clean writes a fresh epoch sentinel for
            the process running now, so it votes at once instead of waiting out the quarantine; it applies only if the node still has the
            sentinel shown here.
          </p>
          <div className={`${styles.verdictLine} ${warning ? styles.bad : styles.warn}`} data-testid="mark-clean-warning">
            <span className={styles.verdictIcon} aria-hidden="true">
              !
            </span>
            <div>
              <strong>Only if you know it lost no lock that is still valid</strong>
              The quarantine exists because a node that lost its data or restarted may have voted for a lock that is still held elsewhere.
              Letting it vote early can grant that resource to a second client.
              {warning ? ` Node ${node.id}: ${warning}.` : ''}
            </div>
          </div>
          <label className={`${styles.field} ${styles.fieldWide}`}>
            Reason (recorded in the audit log)
            <textarea
              value={reason}
              onChange={(e) => setReason(e.target.value)}
              maxLength={500}
              required
              placeholder="e.g. fresh node, never served locks"
              aria-describedby="mark-clean-hint"
            />
            <span className={styles.hint} id="mark-clean-hint">
              At least 3 characters.
            </span>
          </label>
        </>
      )}
      {changed ? (
        <p className={styles.errorText} role="alert" data-testid="mark-clean-changed">
          Not marked, nothing was written: {changed.message}.
        </p>
      ) : drifted ? (
        <p className={styles.errorText} role="alert" data-testid="mark-clean-changed">
          Node {node.id} changed while this dialog was open (its process or epoch sentinel is not the one shown). Look again before marking
          it clean.
        </p>
      ) : mutation.error ? (
        <p className={styles.errorText} role="alert">
          Could not mark it clean: {mutation.error.message}
        </p>
      ) : null}
    </Modal>
  );
}
