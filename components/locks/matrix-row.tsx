'use client';

import { memo, type CSSProperties } from 'react';
import { NodeCell, ValidityCell } from './matrix-cells';
import { ResourceCell } from './matrix-resource-cell';
import { StateBadge } from './state-badge';
import { stateColor } from './lock-state';
import { lockHues } from './token';
import { leaseMs } from './ttl';
import type { MatrixRowData } from './window-merge';
import styles from './lock-matrix.module.css';

export type { MatrixRowData } from './window-merge';

/** One lock of the matrix: its pick box, state, resource, a cell per node and its validity. */
export const MatrixRow = memo(function MatrixRow({
  row,
  index,
  start,
  nodeIds,
  selected,
  linkable,
  onSelect,
  onOpen,
  picked = null,
  onPick,
}: {
  row: MatrixRowData;
  index: number;
  start: number;
  /** Picked for a bulk release (a checkbox in the first column); null: no checkbox (a viewer, or foreign keys). */
  picked?: boolean | null;
  onPick?: (row: MatrixRowData) => void;
  nodeIds: number[];
  selected: boolean;
  linkable: boolean;
  onSelect: (key: string) => void;
  onOpen: (row: MatrixRowData) => void;
}) {
  const { view, t0 } = row;
  const lease = leaseMs(view);
  const hues = lockHues(view.cells.flatMap((c) => (c.present && c.token !== null ? [c.token] : [])));
  const peers = [...hues.keys()];
  return (
    <div
      role="row"
      aria-rowindex={index + 2}
      aria-selected={selected}
      id={`lock-row-${index}`}
      className={`${styles.row} ${selected ? styles.rowSelected : ''} ${styles[`row-${view.state}`]}`}
      style={{ transform: `translateY(${start}px)`, '--state-tone': stateColor(view.state) } as CSSProperties}
      data-testid="lock-row"
      data-resource={view.resource}
      data-state={view.state}
      onClick={() => onSelect(view.key)}
      onDoubleClick={() => onOpen(row)}
    >
      {picked !== null ? (
        <div role="cell" className={styles.selectCell}>
          <input
            type="checkbox"
            aria-label={`Select ${view.resource}`}
            checked={picked}
            onChange={() => onPick?.(row)}
            onClick={(e) => e.stopPropagation()}
            data-testid="lock-select"
          />
        </div>
      ) : null}
      <div role="cell" className={styles.stateCell}>
        <StateBadge state={view.state} />
      </div>
      <ResourceCell row={row} nodeCount={nodeIds.length} linkable={linkable} onOpen={onOpen} />
      {nodeIds.map((node) => (
        <NodeCell
          key={node}
          node={node}
          cell={view.cells.find((c) => c.node === node)}
          majority={view.majorityToken}
          t0={t0}
          lease={lease}
          overCeiling={view.overCeilingNodes.includes(node)}
          hue={hues.get(view.cells.find((c) => c.node === node)?.token ?? '')}
          peers={peers}
        />
      ))}
      <ValidityCell view={view} t0={t0} lease={lease} />
    </div>
  );
});
