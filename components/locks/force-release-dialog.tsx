'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import Link from 'next/link';
import { useState, type FormEvent } from 'react';
import type { ForceReleaseResponse } from '@/lib/api/locks';
import { ApiError } from '@/lib/client/fetch-json';
import { forceRelease } from '@/lib/client/lock-queries';
import { queryKeys } from '@/lib/client/queries';
import { useModalDialog } from '../ui/use-modal-dialog';
import { formatClock, formatTtl } from './format';
import { HolderPulse } from './holder-pulse';
import { ReleaseConfirmFields, reasonIsOk } from './release-confirm-fields';
import { TokenChip } from './token-chip';
import styles from './force-release-dialog.module.css';

/** A token the operator saw on the detail screen, and the nodes it was on. */
export interface SeenToken {
  token: string;
  nodes: number[];
  majority: boolean;
}

type Outcome = ForceReleaseResponse['nodes'][number]['outcome'];
const OUTCOME: Record<Outcome, { label: string; tone: 'ok' | 'warn' | 'bad' | 'muted' | 'danger' }> = {
  'would-delete': { label: 'will delete', tone: 'danger' },
  deleted: { label: 'deleted', tone: 'ok' },
  'other-holder': { label: 'left alone: other token', tone: 'warn' },
  absent: { label: 'nothing there', tone: 'muted' },
  unreachable: { label: 'unreachable', tone: 'bad' },
};

const PREVIEW_REASON = 'dry-run preview';

function errorText(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.status === 403) return 'Only operators can force-release locks.';
    return err.message;
  }
  return err instanceof Error ? err.message : String(err);
}

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
  const ref = useModalDialog<HTMLDialogElement>();
  const queryClient = useQueryClient();
  const [token, setToken] = useState(initialToken);
  const [reason, setReason] = useState('');
  const [typed, setTyped] = useState('');
  const [liveConfirmed, setLiveConfirmed] = useState(false);

  const preview = useQuery({
    queryKey: queryKeys.forceReleasePreview(resource, token),
    queryFn: () => forceRelease(resource, { token, reason: PREVIEW_REASON, dryRun: true }),
    staleTime: Number.POSITIVE_INFINITY,
    gcTime: 0,
    retry: false,
    refetchOnWindowFocus: false,
  });

  const release = useMutation({
    mutationFn: () =>
      forceRelease(resource, { token, reason: reason.trim(), dryRun: false, ...(holderAlive ? { confirmLiveHolder: true as const } : {}) }),
    onSettled: () => {
      void queryClient.invalidateQueries({ queryKey: queryKeys.locks });
      void queryClient.invalidateQueries({ queryKey: queryKeys.lock(resource) });
      void queryClient.invalidateQueries({ queryKey: queryKeys.audit });
    },
  });

  const result = release.data;
  const wouldDelete = preview.data?.nodes.filter((n) => n.outcome === 'would-delete').length ?? 0;
  const reasonOk = reasonIsOk(reason);
  const typedOk = typed === resource;
  // A live holder (it extends at its pace) takes one more confirmation; the API refuses without it.
  const holderAlive = preview.data?.liveness?.pulse === 'alive' && wouldDelete > 0;
  const canConfirm =
    !!preview.data && wouldDelete > 0 && reasonOk && typedOk && (!holderAlive || liveConfirmed) && !release.isPending && !result;
  const seen = tokens.find((t) => t.token === token);

  const close = () => {
    if (release.isPending) return;
    ref.current?.close();
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (canConfirm) release.mutate();
  };

  return (
    <dialog
      ref={ref}
      className={`dialog ${styles.dialog}`}
      aria-labelledby="force-release-title"
      data-testid="force-release-dialog"
      onClose={onClose}
      onCancel={(e) => {
        if (release.isPending) e.preventDefault();
      }}
    >
      <div className={styles.head}>
        <div>
          <h2 id="force-release-title">
            {result ? 'Force-release done' : 'Force-release'} <code className={styles.resource}>{resource}</code>
          </h2>
          <p className={styles.lede}>
            Compare-and-delete on every node: only keys that still hold the token below are deleted, so a newer holder is never hit.
          </p>
        </div>
        <button type="button" className="button button-ghost" aria-label="Close" onClick={close} disabled={release.isPending}>
          ✕
        </button>
      </div>

      <ol className={styles.steps} aria-label="Steps">
        {['Preview', 'Reason', 'Confirm', 'Result'].map((label, i) => {
          const step = result ? 4 : !preview.data ? 0 : !reasonOk ? 1 : 2;
          const state = i < step ? 'done' : i === step ? 'current' : 'todo';
          return (
            <li key={label} className={`${styles.step} ${styles[`step-${state}`]}`} aria-current={state === 'current' ? 'step' : undefined}>
              <span className={styles.stepNum}>{state === 'done' ? '✓' : i + 1}</span>
              {label}
            </li>
          );
        })}
      </ol>

      {!result && (
        <form onSubmit={submit} className={styles.body}>
          <div className={styles.tokenBox}>
            <span className={styles.boxLabel}>Token you saw {formatClock(seenAt)}</span>
            {tokens.length > 1 ? (
              <div className={styles.tokenChoices} role="radiogroup" aria-label="Token to release">
                {tokens.map((t) => (
                  <label key={t.token} className={`${styles.tokenChoice} ${t.token === token ? styles.tokenChoiceOn : ''}`}>
                    <input
                      type="radio"
                      name="token"
                      value={t.token}
                      checked={t.token === token}
                      onChange={() => {
                        setToken(t.token);
                        setLiveConfirmed(false);
                      }}
                      disabled={release.isPending}
                    />
                    <TokenChip
                      token={t.token}
                      variant={t.majority ? 'majority' : 'plain'}
                      copy={false}
                      peers={tokens.map((x) => x.token)}
                    />
                    <span className="muted small">
                      on node {t.nodes.join(', ')}
                      {t.majority ? ' · majority' : ''}
                    </span>
                  </label>
                ))}
              </div>
            ) : (
              <div className={styles.tokenOne}>
                <TokenChip token={token} variant={seen?.majority ? 'majority' : 'plain'} full />
                <span className="muted small">on node {seen?.nodes.join(', ')}</span>
              </div>
            )}
          </div>

          <section
            aria-labelledby="preview-title"
            className={styles.preview}
            data-testid="force-release-preview"
            data-loading-state={preview.isFetching ? 'loading' : preview.isError ? 'error' : 'ready'}
          >
            <div className={styles.previewHead}>
              <h3 id="preview-title">1 · Dry run: what each node will do</h3>
              <button
                type="button"
                className="button button-ghost small"
                onClick={() => void preview.refetch()}
                disabled={preview.isFetching || release.isPending}
              >
                {preview.isFetching ? 'Checking…' : 'Check again'}
              </button>
            </div>
            {preview.isError ? (
              <p className="callout callout-bad" role="alert">
                {errorText(preview.error)}
              </p>
            ) : (
              <NodeOutcomes nodes={preview.data?.nodes ?? null} labels={labels} token={token} />
            )}
            {preview.data?.liveness && wouldDelete > 0 && (
              <HolderPulse
                liveness={preview.data.liveness}
                confirmed={liveConfirmed}
                onConfirm={setLiveConfirmed}
                disabled={release.isPending}
              />
            )}
            {preview.data && (
              <p className={`${styles.verdict} ${wouldDelete === 0 ? styles.verdictWarn : ''}`} data-testid="force-release-verdict">
                {wouldDelete === 0
                  ? 'Nothing to release with this token: it expired or changed hands since you looked.'
                  : `Will delete the key on ${wouldDelete} of ${preview.data.nodes.length} nodes.`}
                {preview.data.nodes.some((n) => n.outcome === 'other-holder') ? ' Nodes holding another token keep it.' : ''}
              </p>
            )}
          </section>

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

          {release.isError && (
            <p className="callout callout-bad" role="alert">
              {errorText(release.error)}
            </p>
          )}

          <div className="dialog-actions">
            <button type="button" className="button" onClick={close} disabled={release.isPending}>
              Cancel
            </button>
            <button type="submit" className={`button ${styles.danger}`} disabled={!canConfirm} data-testid="force-release-confirm">
              {release.isPending ? 'Releasing…' : `Force-release on ${wouldDelete} node${wouldDelete === 1 ? '' : 's'}`}
            </button>
          </div>
        </form>
      )}

      {result && (
        <div className={styles.body} data-testid="force-release-result">
          <p className={`${styles.resultBanner} ${result.deleted > 0 ? styles.resultOk : styles.resultWarn}`} role="status">
            <strong>{result.deleted > 0 ? `Deleted on ${result.deleted} of ${result.nodes.length} nodes.` : 'Nothing was deleted.'}</strong>
            {result.auditId && (
              <span>
                {' '}
                Audit entry <code data-testid="force-release-audit-id">{result.auditId}</code> ·{' '}
                <Link href="/audit?action=lock.force-release">open the audit log</Link>
              </span>
            )}
          </p>
          <NodeOutcomes nodes={result.nodes} labels={labels} token={token} showAfter />
          <div className="dialog-actions">
            <Link className="button" href="/locks">
              Back to the matrix
            </Link>
            <button type="button" className="button button-primary" onClick={close} autoFocus>
              Done
            </button>
          </div>
        </div>
      )}
    </dialog>
  );
}

function NodeOutcomes({
  nodes,
  labels,
  token,
  showAfter = false,
}: {
  nodes: ForceReleaseResponse['nodes'] | null;
  labels: Map<number, string>;
  token: string;
  showAfter?: boolean;
}) {
  if (!nodes) {
    return (
      <div className={styles.outcomesLoading} aria-busy="true">
        Asking every node…
      </div>
    );
  }
  return (
    <table className={styles.outcomes} data-testid="force-release-nodes">
      <thead>
        <tr>
          <th scope="col">Node</th>
          <th scope="col">{showAfter ? 'Held before' : 'Holds now'}</th>
          <th scope="col">{showAfter ? 'Result' : 'Will'}</th>
          {showAfter && <th scope="col">After</th>}
        </tr>
      </thead>
      <tbody>
        {nodes.map((n) => {
          const info = OUTCOME[n.outcome];
          return (
            <tr key={n.node} data-testid={`outcome-node-${n.node}`} data-outcome={n.outcome}>
              <th scope="row">
                node {n.node} <span className={styles.nodeLabel}>{labels.get(n.node) ?? ''}</span>
              </th>
              <td>
                {n.before === null ? (
                  <span className="muted">could not read</span>
                ) : n.before.token === null ? (
                  <span className="muted">no key</span>
                ) : (
                  <span className={styles.holds}>
                    <TokenChip token={n.before.token} variant={n.before.token === token ? 'majority' : 'other'} />
                    {n.before.pttlMs !== null && (
                      <span className="muted small mono">{n.before.pttlMs < 0 ? 'no TTL' : formatTtl(n.before.pttlMs)}</span>
                    )}
                  </span>
                )}
              </td>
              <td>
                <span className={`${styles.pill} ${styles[`pill-${info.tone}`]}`}>{info.label}</span>
                {n.error && n.outcome === 'unreachable' ? <span className={styles.err}>{n.error}</span> : null}
              </td>
              {showAfter && (
                <td>
                  {n.after === null ? (
                    <span className="muted">—</span>
                  ) : n.after.token === null ? (
                    <span className="muted">no key</span>
                  ) : (
                    <TokenChip token={n.after.token} variant="other" />
                  )}
                </td>
              )}
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
