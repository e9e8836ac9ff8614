'use client';

import type { SlotHolderView, SlotLockView } from '@/lib/api/slot-locks';
import { KIND_LABEL } from './slot-queries';
import { TokenChip } from './token-chip';
import { lockHues } from './token';
import styles from './slot-locks.module.css';

/** What a semaphore or read-write lock holds, in words: `2/3 permits`, `3 readers`, `writer`, `free`. */
export function heldText(lock: SlotLockView): string {
  if (lock.kind === 'semaphore') return `${lock.held}/${lock.limit ?? '?'} permits`;
  if (lock.mode === 'write') return 'writer';
  const readers = lock.holders.length;
  return readers === 0 ? 'free' : `${readers} reader${readers === 1 ? '' : 's'}`;
}

/** The holder as its metadata names it: owner, else the principal, else the host. */
export function holderName(holder: Pick<SlotHolderView, 'meta'>): string | null {
  const meta = holder.meta;
  return meta?.owner ?? meta?.principal ?? meta?.host ?? null;
}

/** The kind as a badge (semaphore, RW lock). */
export function KindBadge({ kind }: { kind: SlotLockView['kind'] | 'mutex' }) {
  return (
    <span className={`${styles.kind} ${styles[`kind-${kind}`]}`} data-testid="kind-badge" data-kind={kind}>
      {KIND_LABEL[kind]}
    </span>
  );
}

/** The holders of a lock: each token (its colour), its role, its slots and who it says it is. */
export function HolderList({ lock }: { lock: SlotLockView }) {
  const hues = lockHues(lock.holders.map((h) => h.token));
  if (lock.holders.length === 0) return <span className="muted">none on a quorum</span>;
  return (
    <ul className={styles.holders}>
      {lock.holders.map((h) => (
        <li key={h.token} data-testid="slot-holder" data-role={h.role}>
          <TokenChip token={h.token} variant="majority" hue={hues.get(h.token)} tabbable={false} peers={lock.holders.map((x) => x.token)} />
          <span className="small">
            {h.role === 'permit' ? '' : `${h.role} · `}
            {h.slots.length === 1 ? `slot ${h.slots[0]}` : `slots ${h.slots.join(', ')}`}
            {holderName(h) ? ` · ${holderName(h)}` : ''}
          </span>
        </li>
      ))}
    </ul>
  );
}

/** A waiting writer, or keys without a quorum: what needs a second look. */
export function SlotNotes({ lock }: { lock: SlotLockView }) {
  const notes: string[] = [];
  if (lock.intent) notes.push(`writer waiting${holderName(lock.intent) ? ` (${holderName(lock.intent)})` : ''}`);
  if (lock.unsettled > 0) notes.push(`${lock.unsettled} key${lock.unsettled === 1 ? '' : 's'} without a quorum`);
  if (notes.length === 0) return <span className="muted">—</span>;
  return (
    <span className={styles.notes} data-testid="slot-notes">
      {notes.join(' · ')}
    </span>
  );
}
