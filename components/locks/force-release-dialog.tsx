'use client';

import { useState } from 'react';
import { ForceReleasePreview, ForceReleaseResult, ReleaseSteps } from './force-release-parts';
import { ReleaseConfirmFields, reasonIsOk } from './release-confirm-fields';
import { ReleaseDialogFrame, ResourceReleaseTitle } from './release-dialog-frame';
import { ReleaseForm } from './release-form';
import { SeenTokenPicker, type SeenToken } from './seen-token-picker';
import { useForceRelease } from './use-force-release';

/**
 * Force-release in four steps: a dry run of what each node will do with the token the operator
 * saw, a required reason, the resource typed to confirm, then the per-node result and the audit
 * entry. The token is the one from the screen the operator opened this from; it is never re-read,
 * so a lock that changed hands in the meantime is left alone (compare-and-delete).
 */
export function ForceReleaseDialog({
  resource,
  tokens,
  initialToken,
  seenAt,
  labels,
  onClose,
}: {
  resource: string;
  tokens: SeenToken[];
  initialToken: string;
  seenAt: number;
  labels: Map<number, string>;
  onClose: () => void;
}) {
  const [token, setToken] = useState(initialToken);
  const [reason, setReason] = useState('');
  const [typed, setTyped] = useState('');
  const [liveConfirmed, setLiveConfirmed] = useState(false);
  const { preview, release, wouldDelete, holderAlive } = useForceRelease(resource, token, reason);

  const result = release.data;
  const reasonOk = reasonIsOk(reason);
  const typedOk = typed === resource;
  const canConfirm =
    !!preview.data && wouldDelete > 0 && reasonOk && typedOk && (!holderAlive || liveConfirmed) && !release.isPending && !result;

  return (
    <ReleaseDialogFrame
      id="force-release"
      title={<ResourceReleaseTitle resource={resource} done={!!result} />}
      lede="Compare-and-delete on every node: only keys that still hold the token below are deleted, so a newer holder is never hit."
      release={release}
      canConfirm={canConfirm}
      onClose={onClose}
    >
      <ReleaseSteps step={result ? 4 : !preview.data ? 0 : !reasonOk ? 1 : 2} />

      {!result && (
        <ReleaseForm
          confirmLabel={`Force-release on ${wouldDelete} node${wouldDelete === 1 ? '' : 's'}`}
          confirmTestId="force-release-confirm"
        >
          <SeenTokenPicker
            tokens={tokens}
            token={token}
            seenAt={seenAt}
            onPick={(picked) => {
              setToken(picked);
              setLiveConfirmed(false);
            }}
            disabled={release.isPending}
          />

          <ForceReleasePreview
            preview={preview}
            wouldDelete={wouldDelete}
            labels={labels}
            token={token}
            liveConfirmed={liveConfirmed}
            onLiveConfirm={setLiveConfirmed}
            busy={release.isPending}
          />

          <ReleaseConfirmFields
            reason={reason}
            onReasonChange={setReason}
            reasonGoesTo="the audit log"
            placeholder="e.g. holder crashed mid-deploy (INC-2317), lock blocks the queue"
            showCount
            prompt={
              <>
                Type <code>{resource}</code> to confirm
              </>
            }
            expects="name"
            typed={typed}
            onTypedChange={setTyped}
            typedOk={typedOk}
            disabled={release.isPending}
          />
        </ReleaseForm>
      )}

      {result && <ForceReleaseResult result={result} labels={labels} token={token} />}
    </ReleaseDialogFrame>
  );
}
