'use client';

import type { Virtualizer } from '@tanstack/react-virtual';
import { useEffect } from 'react';
import { isTyping as typing } from '../ui/keyboard';
import type { MatrixRowData } from './window-merge';

/**
 * The matrix from the keyboard: j/k or the arrows move the selected row (from the first one on
 * screen when none is selected), Enter opens it, Escape clears the selection and the inspector.
 * Inactive while typing in a field or while a dialog is open.
 */
export function useMatrixKeys({
  rows,
  selectedIndex,
  firstIndex,
  virtualizer,
  open,
  setSelectedKey,
  setInspectKey,
}: {
  rows: readonly MatrixRowData[];
  selectedIndex: number;
  firstIndex: number;
  virtualizer: Virtualizer<HTMLDivElement, Element>;
  open: (row: MatrixRowData) => void;
  setSelectedKey: (key: string | null) => void;
  setInspectKey: (key: string | null) => void;
}): void {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.metaKey || e.ctrlKey || e.altKey || typing(e.target) || document.querySelector('dialog[open]')) return;
      const down = e.key === 'j' || e.key === 'ArrowDown';
      const up = e.key === 'k' || e.key === 'ArrowUp';
      if ((down || up) && rows.length > 0) {
        e.preventDefault();
        const from = selectedIndex >= 0 ? selectedIndex : down ? firstIndex - 1 : firstIndex + 1;
        const next = Math.min(rows.length - 1, Math.max(0, from + (down ? 1 : -1)));
        setSelectedKey(rows[next]!.view.key);
        virtualizer.scrollToIndex(next, { align: 'auto' });
      } else if (e.key === 'Enter' && selectedIndex >= 0) {
        e.preventDefault();
        open(rows[selectedIndex]!);
      } else if (e.key === 'Escape') {
        setSelectedKey(null);
        setInspectKey(null);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [rows, selectedIndex, firstIndex, virtualizer, open, setSelectedKey, setInspectKey]);
}
