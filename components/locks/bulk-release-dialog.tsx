'use client';

import { useState } from 'react';
import { BulkLiveHolders } from './bulk-live-holders';
import { BulkReleaseResults } from './bulk-release-results';
import type { PickedLock } from './lock-selection';
import { ReleaseConfirmFields, reasonIsOk } from './release-confirm-fields';
import { ReleaseDialogFrame, ReleaseDoneButton } from './release-dialog-frame';
import { ReleaseForm } from './release-form';
import { useBulkRelease } from './use-bulk-release';

/**
 * Force-release several locks in one flow: a dry run of every (lock, token) the operator picked,
 * one reason, the count typed to confirm, then each lock's result and its audit entry. A split
 * lock contributes one item per token. Tokens are the ones seen when the locks were picked, never
 * re-read: a lock that changed hands since is left alone (compare-and-delete on the server).
 */
export function BulkReleaseDialog({ locks, onClose, onDone }: { locks: PickedLock[]; onClose: () => void; onDone?: () => void }) {
  const [reason, setReason] = useState('');
  const [typed, setTyped] = useState('');
  // Live holders in the batch: the operator says they saw them, or the server refuses the batch 409.
  const [liveConfirmed, setLiveConfirmed] = useState(false);
  const { items, preview, release, willDelete, live } = useBulkRelease(locks, reason, onDone);

  const result = release.data;
  const reasonOk = reasonIsOk(reason);
  const typedOk = typed.trim() === String(items.length);
  const canConfirm =
    !!preview.data && willDelete > 0 && reasonOk && typedOk && (live.length === 0 || liveConfirmed) && !release.isPending && !result;
  const noun = `${items.length} token${items.length === 1 ? '' : 's'} of ${locks.length} lock${locks.length === 1 ? '' : 's'}`;

  return (
    <ReleaseDialogFrame
      id="bulk-release"
      title={result ? 'Force-release done' : `Force-release ${noun}`}
      lede="Compare-and-delete on every node, lock by lock: only keys that still hold the token you saw are deleted, so a newer holder is never hit. One reason for all; each lock gets its own audit entry."
      release={release}
      canConfirm={canConfirm}
      onClose={onClose}
    >
      <BulkReleaseResults preview={preview} result={result} willDelete={willDelete} itemCount={items.length} />

      {!result && (
        <ReleaseForm
          confirmLabel={`Force-release ${items.length} token${items.length === 1 ? '' : 's'}`}
          confirmTestId="bulk-release-confirm"
        >
          <ReleaseConfirmFields
            reason={reason}
            onReasonChange={setReason}
            reasonGoesTo="every lock's audit entry"
            placeholder="e.g. workers of deploy 4121 died holding their locks (INC-2318)"
            prompt={
              <>
                Type <code>{items.length}</code>, the number of tokens, to confirm
              </>
            }
            expects="count"
            typed={typed}
            onTypedChange={setTyped}
            typedOk={typedOk}
            disabled={release.isPending}
          />
          {live.length > 0 && (
            <BulkLiveHolders live={live} confirmed={liveConfirmed} onConfirm={setLiveConfirmed} disabled={release.isPending} />
          )}
        </ReleaseForm>
      )}
      {result && (
        <div className="dialog-actions">
          <ReleaseDoneButton primary />
        </div>
      )}
    </ReleaseDialogFrame>
  );
}
