'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { SlotHolderView, SlotKind } from '@/lib/api/slot-locks';
import { HolderPulse } from './holder-pulse';
import { ReleaseConfirmFields, reasonIsOk } from './release-confirm-fields';
import { ReleaseDialogFrame, ReleaseDoneButton, ResourceReleaseTitle } from './release-dialog-frame';
import { ReleaseErrorCallout } from './release-error';
import { ReleaseForm } from './release-form';
import { forceReleaseSlot, slotQueryKeys } from './slot-queries';
import { TokenChip } from './token-chip';
import styles from './force-release-dialog.module.css';

/** What is released: one permit's slot, a reader's slot, or every slot of the writer. */
export interface SlotTarget {
  kind: SlotKind;
  resource: string;
  holder: SlotHolderView;
  /** The slot named (a semaphore's permit); null: every slot of the holder (a read-write lock's reader or writer). */
  slot: number | null;
}

function targetText(t: SlotTarget): string {
  if (t.slot !== null) return `slot ${t.slot} of this permit`;
  if (t.holder.role === 'writer') return `the writer (slots ${t.holder.slots.join(', ')})`;
  return `this reader (slot ${t.holder.slots.join(', ')})`;
}

/**
 * Force-release of one permit's slot or one read-write lock holder: the token the operator saw
 * (never re-read), a reason for the audit log, the name typed to confirm, then each slot's per-node
 * outcome. The server deletes only keys that still hold this token on those slots.
 */
export function SlotReleaseDialog({ target, onClose }: { target: SlotTarget; onClose: () => void }) {
  const queryClient = useQueryClient();
  const [reason, setReason] = useState('');
  const [typed, setTyped] = useState('');
  const [liveConfirmed, setLiveConfirmed] = useState(false);
  const slot = target.slot !== null ? { slot: target.slot } : {};
  // The holder's liveness first (a dry run: nothing written): a live holder needs the extra confirmation.
  const preview = useQuery({
    queryKey: slotQueryKeys.dryRun(target.kind, target.resource, target.holder.token, target.slot),
    queryFn: () => forceReleaseSlot(target.kind, target.resource, { token: target.holder.token, reason: 'dry run', dryRun: true, ...slot }),
    // Read afresh each time the dialog opens: a holder's pulse changes by the second.
    gcTime: 0,
    retry: false,
  });
  const alive = preview.data?.liveness.pulse === 'alive';
  const release = useMutation({
    mutationFn: () =>
      forceReleaseSlot(target.kind, target.resource, {
        token: target.holder.token,
        reason: reason.trim(),
        ...slot,
        ...(alive && liveConfirmed ? { confirmLiveHolder: true as const } : {}),
      }),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: slotQueryKeys.all }),
  });
  const result = release.data;
  const canConfirm =
    reasonIsOk(reason) && typed === target.resource && !!preview.data && (!alive || liveConfirmed) && !release.isPending && !result;
  return (
    <ReleaseDialogFrame
      id="slot-release"
      title={<ResourceReleaseTitle resource={target.resource} done={!!result} />}
      lede="Compare-and-delete on every node: only the keys of these slots that still hold the token below are deleted, so no other holder is hit."
      release={release}
      canConfirm={canConfirm}
      onClose={onClose}
    >
      {!result && (
        <ReleaseForm confirmLabel="Force-release" confirmTestId="slot-release-confirm">
          <p>
            1 · Releasing <strong>{targetText(target)}</strong>, held by <TokenChip token={target.holder.token} variant="majority" full />
          </p>
          {preview.data && (
            <HolderPulse
              liveness={preview.data.liveness}
              confirmed={liveConfirmed}
              onConfirm={setLiveConfirmed}
              disabled={release.isPending}
            />
          )}
          {preview.isError && <ReleaseErrorCallout error={preview.error} />}
          <ReleaseConfirmFields
            reason={reason}
            onReasonChange={setReason}
            reasonGoesTo="the audit log"
            placeholder="e.g. worker died holding its permit (INC-2317)"
            prompt={
              <>
                Type <code>{target.resource}</code> to confirm
              </>
            }
            expects="name"
            typed={typed}
            onTypedChange={setTyped}
            typedOk={typed === target.resource}
            disabled={release.isPending}
          />
        </ReleaseForm>
      )}
      {result && (
        <div className={styles.body} data-testid="slot-release-result" data-deleted={result.deleted}>
          <p role="status">
            Deleted on {result.deleted} key{result.deleted === 1 ? '' : 's'} across the nodes. Audit entry <code>{result.auditId}</code>.
          </p>
          <ul>
            {result.results.map((r) => (
              <li key={r.slot}>
                slot {r.slot}:{' '}
                {r.nodes.map((n) => (
                  <span key={n.node} data-outcome={n.outcome}>
                    node {n.node} {n.outcome}
                    {n.node === r.nodes.at(-1)?.node ? '' : ', '}
                  </span>
                ))}
              </li>
            ))}
          </ul>
          <div className="dialog-actions">
            <ReleaseDoneButton />
          </div>
        </div>
      )}
    </ReleaseDialogFrame>
  );
}
