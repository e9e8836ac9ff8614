'use client';

import type { VirtualItem } from '@tanstack/react-virtual';
import { MatrixRow, type MatrixRowData } from './matrix-row';
import { HEADER_HEIGHT } from './use-matrix-scroller';
import styles from './lock-matrix.module.css';

/** The matrix's rendered rows (only those near the screen), and a loader row after them while pages are left. */
export function MatrixRows({
  rows,
  items,
  totalSize,
  isFetchingNextPage,
  nodeIds,
  selectedKey,
  linkable,
  picked,
  onPick,
  onSelect,
  onOpen,
}: {
  rows: readonly MatrixRowData[];
  items: readonly VirtualItem[];
  totalSize: number;
  isFetchingNextPage: boolean;
  nodeIds: number[];
  selectedKey: string | null;
  linkable: boolean;
  /** The keys picked for a bulk release; null when rows cannot be picked. */
  picked: ReadonlyMap<string, unknown> | null;
  onPick: (row: MatrixRowData) => void;
  onSelect: (key: string) => void;
  onOpen: (row: MatrixRowData) => void;
}) {
  return (
    <div className={styles.canvas} style={{ height: totalSize }} role="rowgroup">
      {items.map((item) => {
        const row = rows[item.index];
        if (!row) {
          return (
            <div
              key={item.key}
              className={styles.moreRow}
              style={{ transform: `translateY(${item.start - HEADER_HEIGHT}px)` }}
              role="row"
              data-testid="lock-loader-row"
            >
              <span role="cell">{isFetchingNextPage ? 'Loading more locks…' : 'Scroll for more'}</span>
            </div>
          );
        }
        return (
          <MatrixRow
            key={item.key}
            row={row}
            index={item.index}
            start={item.start - HEADER_HEIGHT}
            nodeIds={nodeIds}
            selected={row.view.key === selectedKey}
            linkable={linkable}
            picked={picked ? picked.has(row.view.key) : null}
            onPick={onPick}
            onSelect={onSelect}
            onOpen={onOpen}
          />
        );
      })}
    </div>
  );
}
