'use client';

import type { Virtualizer } from '@tanstack/react-virtual';
import { useRouter } from 'next/navigation';
import { useCallback, useMemo, useState } from 'react';
import type { MatrixRowData } from './matrix-row';
import { useMatrixKeys } from './matrix-keys';

/**
 * The matrix's selected row and inspected key, from the mouse and the keyboard (j/k or arrows,
 * Enter opens). Opening a row of the console's own layout goes to its lock page; a foreign key
 * (a pattern search) opens in the inspector instead.
 */
export function useMatrixCursor({
  rows,
  ownLayout,
  firstIndex,
  virtualizer,
}: {
  rows: readonly MatrixRowData[];
  ownLayout: boolean;
  firstIndex: number;
  virtualizer: Virtualizer<HTMLDivElement, Element>;
}) {
  const router = useRouter();
  const [selectedKey, setSelectedKey] = useState<string | null>(null);
  const [inspectKey, setInspectKey] = useState<string | null>(null);
  const selectedIndex = useMemo(() => (selectedKey === null ? -1 : rows.findIndex((r) => r.view.key === selectedKey)), [rows, selectedKey]);
  const open = useCallback(
    (row: MatrixRowData) => {
      if (ownLayout) router.push(`/locks/${encodeURIComponent(row.view.resource)}`);
      else {
        setSelectedKey(row.view.key);
        setInspectKey(row.view.key);
      }
    },
    [ownLayout, router],
  );

  useMatrixKeys({ rows, selectedIndex, firstIndex, virtualizer, open, setSelectedKey, setInspectKey });

  const inspected = inspectKey === null ? null : (rows.find((r) => r.view.key === inspectKey) ?? null);
  return { selectedKey, setSelectedKey, open, inspected, closeInspector: () => setInspectKey(null) };
}
