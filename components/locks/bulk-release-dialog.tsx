'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import Link from 'next/link';
import { useState, type FormEvent } from 'react';
import type { ForceReleaseResponse } from '@/lib/api/locks';
import { ApiError } from '@/lib/client/fetch-json';
import { forceReleaseMany } from '@/lib/client/lock-queries';
import { queryKeys } from '@/lib/client/queries';
import { useModalDialog } from '../ui/use-modal-dialog';
import { releaseItems, type PickedLock } from './lock-selection';
import { ReleaseConfirmFields, reasonIsOk } from './release-confirm-fields';
import { TokenChip } from './token-chip';
import styles from './force-release-dialog.module.css';

const PREVIEW_REASON = 'dry-run preview';

function errorText(err: unknown): string {
  if (err instanceof ApiError && err.status === 403) return 'Only operators can force-release locks.';
  return err instanceof Error ? err.message : String(err);
}

/** What one item would do / did, in a few words: "deletes on 3 of 5", "left alone", … */
function itemVerdict(r: ForceReleaseResponse): { text: string; tone: 'ok' | 'warn' | 'bad' | 'danger' | 'muted' } {
  const count = (o: string) => r.nodes.filter((n) => n.outcome === o).length;
  const total = r.nodes.length;
  const unreachable = count('unreachable');
  const tail = unreachable ? ` · ${unreachable} unreachable` : '';
  if (r.dryRun) {
    const will = count('would-delete');
    return will
      ? { text: `will delete on ${will} of ${total}${tail}`, tone: 'danger' }
      : { text: `nothing to delete${tail}`, tone: 'muted' };
  }
  if (r.deleted) return { text: `deleted on ${r.deleted} of ${total}${tail}`, tone: unreachable ? 'warn' : 'ok' };
  return count('other-holder')
    ? { text: 'left alone: changed hands', tone: 'warn' }
    : { text: `nothing deleted${tail}`, tone: unreachable ? 'bad' : 'muted' };
}

/**
 * Force-release several locks in one flow: a dry run of every (lock, token) the operator picked,
 * one reason, the count typed to confirm, then each lock's result and its audit entry. A split
 * lock contributes one item per token. Tokens are the ones seen when the locks were picked, never
 * re-read: a lock that changed hands since is left alone (compare-and-delete on the server).
 */
export function BulkReleaseDialog({ locks, onClose, onDone }: { locks: PickedLock[]; onClose: () => void; onDone?: () => void }) {
  const ref = useModalDialog<HTMLDialogElement>();
  const queryClient = useQueryClient();
  const [reason, setReason] = useState('');
  const [typed, setTyped] = useState('');
  // Live holders in the batch: the operator says they saw them, or the server refuses the batch 409.
  const [liveConfirmed, setLiveConfirmed] = useState(false);
  const items = releaseItems(locks);

  const preview = useQuery({
    queryKey: queryKeys.bulkReleasePreview(items),
    queryFn: () => forceReleaseMany({ locks: items, reason: PREVIEW_REASON, dryRun: true }),
    staleTime: Number.POSITIVE_INFINITY,
    gcTime: 0,
    retry: false,
    refetchOnWindowFocus: false,
  });
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

  const result = release.data;
  const shown = result ?? preview.data;
  const willDelete = preview.data?.results.filter((r) => r.nodes.some((n) => n.outcome === 'would-delete')).length ?? 0;
  const live =
    preview.data?.results.filter((r) => r.liveness?.pulse === 'alive' && r.nodes.some((n) => n.outcome === 'would-delete')) ?? [];
  const reasonOk = reasonIsOk(reason);
  const typedOk = typed.trim() === String(items.length);
  const canConfirm =
    !!preview.data && willDelete > 0 && reasonOk && typedOk && (live.length === 0 || liveConfirmed) && !release.isPending && !result;
  const close = () => {
    if (!release.isPending) ref.current?.close();
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (canConfirm) release.mutate();
  };
  const noun = `${items.length} token${items.length === 1 ? '' : 's'} of ${locks.length} lock${locks.length === 1 ? '' : 's'}`;

  return (
    <dialog
      ref={ref}
      className={`dialog ${styles.dialog}`}
      aria-labelledby="bulk-release-title"
      data-testid="bulk-release-dialog"
      onClose={onClose}
      onCancel={(e) => release.isPending && e.preventDefault()}
    >
      <div className={styles.head}>
        <div>
          <h2 id="bulk-release-title">{result ? 'Force-release done' : `Force-release ${noun}`}</h2>
          <p className={styles.lede}>
            Compare-and-delete on every node, lock by lock: only keys that still hold the token you saw are deleted, so a newer holder is
            never hit. One reason for all; each lock gets its own audit entry.
          </p>
        </div>
        <button type="button" className="button button-ghost" aria-label="Close" onClick={close} disabled={release.isPending}>
          ✕
        </button>
      </div>

      <section
        aria-labelledby="bulk-preview-title"
        className={`${styles.preview} ${styles.bulkPreview}`}
        data-testid="bulk-release-preview"
        data-loading-state={preview.isFetching ? 'loading' : preview.isError ? 'error' : 'ready'}
      >
        <div className={styles.previewHead}>
          <h3 id="bulk-preview-title">{result ? 'Result, lock by lock' : '1 · Dry run: what each lock will do'}</h3>
          {!result && (
            <button
              type="button"
              className="button button-ghost small"
              onClick={() => void preview.refetch()}
              disabled={preview.isFetching}
            >
              {preview.isFetching ? 'Checking…' : 'Check again'}
            </button>
          )}
        </div>
        {preview.isError ? (
          <p className="callout callout-bad" role="alert">
            {errorText(preview.error)}
          </p>
        ) : !shown ? (
          <div className={styles.outcomesLoading} aria-busy="true">
            Asking every node…
          </div>
        ) : (
          <table className={`${styles.outcomes} table-stack`} data-testid="bulk-release-results">
            <thead>
              <tr>
                <th scope="col">Lock</th>
                <th scope="col">Token</th>
                <th scope="col">{result ? 'Result' : 'Will'}</th>
                {result && <th scope="col">Audit</th>}
              </tr>
            </thead>
            <tbody>
              {shown.results.map((r) => {
                const v = itemVerdict(r);
                return (
                  <tr
                    key={`${r.resource}\u0000${r.token}`}
                    data-testid="bulk-release-row"
                    data-resource={r.resource}
                    data-deleted={r.deleted}
                  >
                    <th scope="row" className={`mono ${styles.lockName}`}>
                      {r.resource}
                    </th>
                    <td data-label="Token">
                      <TokenChip token={r.token} peers={shown.results.filter((x) => x.resource === r.resource).map((x) => x.token)} />
                    </td>
                    <td data-label={result ? 'Result' : 'Will'}>
                      <span className={`${styles.pill} ${styles[`pill-${v.tone}`]}`}>{v.text}</span>
                    </td>
                    {result && (
                      <td data-label="Audit">
                        {r.auditId ? <code className="small">{r.auditId.slice(0, 8)}</code> : <span className="muted">—</span>}
                      </td>
                    )}
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
        {preview.data && !result && (
          <p className={`${styles.verdict} ${willDelete === 0 ? styles.verdictWarn : ''}`} data-testid="bulk-release-verdict">
            {willDelete === 0
              ? 'Nothing to release: every token expired or changed hands since you picked it.'
              : willDelete === items.length
                ? `All ${items.length} will delete keys.`
                : `${willDelete} of ${items.length} will delete keys; the others have nothing left to delete.`}
          </p>
        )}
        {result && (
          <p className={styles.verdict} role="status" data-testid="bulk-release-summary">
            Deleted {result.deleted} key{result.deleted === 1 ? '' : 's'} over {result.results.filter((r) => r.deleted > 0).length} of{' '}
            {result.results.length} tokens. <Link href="/audit?action=lock.force-release">Open the audit log</Link>
          </p>
        )}
      </section>

      {!result && (
        <form onSubmit={submit} className={styles.body}>
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
            <div className="callout callout-bad" role="alert" data-testid="bulk-live-holders">
              <p>
                <strong>
                  {live.length} of these holders {live.length === 1 ? 'is' : 'are'} alive
                </strong>{' '}
                (extending now: {live.map((r) => r.resource).join(', ')}). A live holder learns it lost its lock only at its next extend or
                check; until then it goes on as if it held it, while another client may take it. Prefer stopping the holders.
              </p>
              <label>
                <input
                  type="checkbox"
                  checked={liveConfirmed}
                  onChange={(e) => setLiveConfirmed(e.target.checked)}
                  disabled={release.isPending}
                  data-testid="bulk-confirm-live"
                />{' '}
                {live.length === 1 ? 'The holder is alive' : 'These holders are alive'} and I release anyway
              </label>
            </div>
          )}
          {release.isError && (
            <p className="callout callout-bad" role="alert">
              {errorText(release.error)}
            </p>
          )}
          <div className="dialog-actions">
            <button type="button" className="button" onClick={close} disabled={release.isPending}>
              Cancel
            </button>
            <button type="submit" className={`button ${styles.danger}`} disabled={!canConfirm} data-testid="bulk-release-confirm">
              {release.isPending ? 'Releasing…' : `Force-release ${items.length} token${items.length === 1 ? '' : 's'}`}
            </button>
          </div>
        </form>
      )}
      {result && (
        <div className="dialog-actions">
          <button type="button" className="button button-primary" onClick={close} autoFocus>
            Done
          </button>
        </div>
      )}
    </dialog>
  );
}
