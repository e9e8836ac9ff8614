'use client';

import { useState } from 'react';
import { BULK_RELEASE_MAX } from '@/lib/api/locks';
import type { LockFilters } from '@/lib/client/queries';
import { formatCount } from './format';
import { pickAllMatching, releaseItems, type PickedLock } from './lock-selection';
import styles from './lock-list-controls.module.css';

/**
 * Above the matrix while locks are picked: how many (and how many tokens: a split lock has
 * several), "select all matching" (every lock of the current filters, page by page, up to what
 * one bulk release takes), clear, and the bulk force-release.
 */
export function SelectionBar({
  picked,
  matching,
  filters,
  onSelectAll,
  onClear,
  onRelease,
}: {
  picked: PickedLock[];
  matching: number | null;
  filters: LockFilters;
  onSelectAll: (locks: PickedLock[]) => void;
  onClear: () => void;
  onRelease: () => void;
}) {
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  if (picked.length === 0 && !note) return null;
  const tokens = releaseItems(picked).length;
  const selectAll = async () => {
    setBusy(true);
    setNote(null);
    try {
      const { picked: all, truncated } = await pickAllMatching(filters);
      onSelectAll(all);
      setNote(
        truncated ? `The first ${formatCount(all.length)} matching locks: one release takes at most ${BULK_RELEASE_MAX} tokens.` : null,
      );
    } catch (err) {
      setNote(`Could not read every matching lock: ${(err as Error).message}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className={styles.selectionBar} role="region" aria-label="Selected locks" data-testid="selection-bar">
      <span>
        <strong data-testid="selection-count">{formatCount(picked.length)}</strong> lock{picked.length === 1 ? '' : 's'} selected
        {tokens !== picked.length ? ` (${formatCount(tokens)} tokens)` : ''}
      </span>
      {matching !== null && matching > picked.length ? (
        <button type="button" className="button button-ghost" onClick={() => void selectAll()} disabled={busy}>
          {busy ? 'Selecting…' : `Select all ${formatCount(matching)} matching`}
        </button>
      ) : null}
      <button
        type="button"
        className="button button-ghost"
        onClick={() => {
          setNote(null);
          onClear();
        }}
      >
        Clear
      </button>
      {picked.length > 0 ? (
        <button type="button" className={`button ${styles.dangerButton}`} onClick={onRelease} data-testid="bulk-release-button">
          Force-release {formatCount(picked.length)}…
        </button>
      ) : null}
      {note ? (
        <span className={styles.selectionNote} role="status">
          {note}
        </span>
      ) : null}
    </div>
  );
}
