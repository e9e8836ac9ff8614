'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useRef, useState } from 'react';
import type { SlotKind, SlotLockView } from '@/lib/api/slot-locks';
import { meQuery } from '@/lib/client/session';
import { CopyButton } from '../ui/copy-button';
import { useCountdowns } from './countdown';
import { formatClock, formatTtl } from './format';
import { SlotHistory } from './slot-history';
import { KindBadge, SlotNotes, heldText, holderName } from './slot-lock-summary';
import { SlotMatrix } from './slot-matrix';
import { slotLockQuery } from './slot-queries';
import { SlotReleaseDialog, type SlotTarget } from './slot-release-dialog';
import { TokenChip } from './token-chip';
import styles from './slot-locks.module.css';

/** One force-release button per permit slot (a semaphore) or per holder (a read-write lock). */
function releaseTargets(kind: SlotKind, lock: SlotLockView): SlotTarget[] {
  return lock.holders.flatMap((holder): SlotTarget[] =>
    kind === 'semaphore'
      ? holder.slots.map((slot) => ({ kind, resource: lock.resource, holder, slot }))
      : [{ kind, resource: lock.resource, holder, slot: null }],
  );
}

function Holders({ lock, isOperator, onRelease }: { lock: SlotLockView; isOperator: boolean; onRelease: (t: SlotTarget) => void }) {
  return (
    <section className={styles.card} aria-labelledby="slot-holders-title">
      <h2 id="slot-holders-title">Holders on a quorum</h2>
      <table className={`table table-stack ${styles.table}`} data-testid="slot-holders">
        <thead>
          <tr>
            <th scope="col">Token</th>
            <th scope="col">Role</th>
            <th scope="col">Slots</th>
            <th scope="col">Fence</th>
            <th scope="col">Validity</th>
            <th scope="col">Holder</th>
            {isOperator && <th scope="col">Action</th>}
          </tr>
        </thead>
        <tbody>
          {[...lock.holders, ...(lock.intent ? [lock.intent] : [])].map((h) => (
            <tr key={`${h.role}:${h.token}`} data-testid="slot-holder-row" data-role={h.role}>
              <th scope="row">
                <TokenChip token={h.token} variant="majority" />
              </th>
              <td data-label="Role">{h.role === 'intent' ? 'writer waiting (intent)' : h.role}</td>
              <td data-label="Slots" className="mono">
                {h.slots.length > 0 ? h.slots.join(', ') : '—'}
              </td>
              <td data-label="Fence" className="mono">
                {h.fence ?? '—'}
              </td>
              <td data-label="Validity">{h.validityMs === null ? '—' : formatTtl(h.validityMs)}</td>
              <td data-label="Holder">{holderName(h) ?? <span className="muted">no metadata</span>}</td>
              {isOperator && (
                <td data-label="Action">
                  <div className={styles.actions}>
                    {h.role === 'intent' ? (
                      <span className="muted small">withdrawn by its writer, or expires</span>
                    ) : (
                      releaseTargets(lock.kind, { ...lock, holders: [h] }).map((t) => (
                        <button
                          key={t.slot ?? 'all'}
                          type="button"
                          className={`button ${styles.danger}`}
                          data-testid="slot-release-button"
                          onClick={() => onRelease(t)}
                        >
                          Force-release {t.slot !== null ? `slot ${t.slot}` : h.role}
                        </button>
                      ))
                    )}
                  </div>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** One semaphore or read-write lock: what it holds, its holders (force-release for operators), its slot × node matrix and its slots' history. */
export function SlotLockDetail({ kind, resource }: { kind: SlotKind; resource: string }) {
  const { data: me } = useQuery(meQuery());
  const { data, error, isPending, dataUpdatedAt } = useQuery(slotLockQuery(kind, resource));
  const [target, setTarget] = useState<SlotTarget | null>(null);
  const root = useRef<HTMLDivElement>(null);
  useCountdowns(root);
  if (isPending) return <div data-loading-state="loading">Reading {resource} from every node…</div>;
  if (error && !data) {
    return (
      <div className="callout callout-bad" role="alert" data-loading-state="error">
        Could not read <code>{resource}</code>: {error.message}
      </div>
    );
  }
  const lock = data.lock;
  const t0 = Math.min(data.readAt, dataUpdatedAt || data.readAt);
  return (
    <div ref={root} className={styles.screen} data-testid="slot-lock-detail" data-loading-state="ready" data-kind={kind}>
      <nav className={styles.crumbs} aria-label="Breadcrumb">
        <Link href={`/locks?kind=${kind}`}>Locks</Link>
        <span aria-hidden="true">/</span>
        <span className="mono">{resource}</span>
      </nav>
      <header className={styles.head}>
        <h1 className={styles.resource}>{resource}</h1>
        <CopyButton value={resource} what="resource name" />
        <KindBadge kind={kind} />
        <strong data-testid="slot-held">{lock ? heldText(lock) : 'free'}</strong>
      </header>
      <p className={styles.facts}>
        <span>
          {kind === 'semaphore' ? 'limit' : 'max readers'} <strong>{lock?.limit ?? '?'}</strong>
        </span>
        <span>
          quorum <strong>{data.quorum}</strong> of {data.nodes.length}
        </span>
        <span>read {formatClock(data.readAt)}</span>
        {lock && (lock.intent || lock.unsettled > 0) ? <SlotNotes lock={lock} /> : null}
      </p>
      {!lock ? (
        <p className="muted" data-testid="slot-lock-free">
          No master holds a key of this {kind === 'semaphore' ? 'semaphore' : 'read-write lock'} now.
        </p>
      ) : (
        <>
          <Holders lock={lock} isOperator={me?.role === 'operator'} onRelease={setTarget} />
          <section className={styles.card} aria-labelledby="slot-matrix-title">
            <h2 id="slot-matrix-title">Slots on every master</h2>
            <SlotMatrix data={data} lock={lock} t0={t0} />
          </section>
        </>
      )}
      <SlotHistory kind={kind} resource={resource} lock={lock} />
      {target && <SlotReleaseDialog target={target} onClose={() => setTarget(null)} />}
    </div>
  );
}
