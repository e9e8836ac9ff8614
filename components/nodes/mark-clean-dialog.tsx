'use client';

import { useState } from 'react';
import type { NodeView } from '@/lib/api/nodes';
import { ApiError } from '@/lib/client/fetch-json';
import type { Outcome } from './actions';
import { MarkCleanError, MarkCleanForm, MarkCleanResult } from './mark-clean-parts';
import { markCleanWarning, sameSentinel } from './mark-clean-sentinel';
import { Modal } from './modal';
import { useMarkClean } from './use-mark-clean';

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
  const mutation = useMarkClean(node, judged, reason, onDone, onClose);
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
        <MarkCleanResult nodeId={node.id} warning={done.warning} />
      ) : (
        <MarkCleanForm nodeId={node.id} judged={judged} warning={markCleanWarning(judged, maxTtlMs)} reason={reason} onReason={setReason} />
      )}
      <MarkCleanError nodeId={node.id} changed={changed} drifted={drifted} error={mutation.error} />
    </Modal>
  );
}
