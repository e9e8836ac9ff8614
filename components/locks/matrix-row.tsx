'use client';

import Link from 'next/link';
import { memo, type CSSProperties } from 'react';
import type { LockView } from '@/lib/api/locks';
import { Countdown, CountdownBar } from './countdown';
import { formatCount } from './format';
import { StateBadge } from './state-badge';
import { stateColor } from './lock-state';
import { hueStyle, lockHues } from './token';
import { TokenChip } from './token-chip';
import { MiddleText } from '../ui/middle-text';
import { leaseMs } from './ttl';
import type { MatrixRowData } from './window-merge';
import styles from './lock-matrix.module.css';

export type { MatrixRowData } from './window-merge';

type Cell = LockView['cells'][number];

/** The header's select-all box: every loaded row, with "some" shown as indeterminate. */
export interface HeaderSelection {
  all: boolean;
  some: boolean;
  onToggleAll: () => void;
}

export function MatrixHeader({
  nodeIds,
  labels,
  nodes,
  quorum,
  selection,
}: {
  nodeIds: number[];
  labels: Map<number, string>;
  nodes: Array<{ node: number; ok: boolean; keys: number; error: string | null }>;
  quorum: number | null;
  selection: HeaderSelection | null;
}) {
  return (
    <div className={styles.header} role="rowgroup">
      <div className={styles.headerRow} role="row" aria-rowindex={1}>
        {selection ? (
          <div role="columnheader" className={`${styles.headCell} ${styles.selectCell}`}>
            <input
              type="checkbox"
              aria-label="Select every loaded lock"
              checked={selection.all}
              ref={(el) => {
                if (el) el.indeterminate = selection.some && !selection.all;
              }}
              onChange={selection.onToggleAll}
              data-testid="select-all-loaded"
            />
          </div>
        ) : null}
        <div role="columnheader" className={`${styles.headCell} ${styles.stateHead}`}>
          State
        </div>
        <div role="columnheader" className={styles.headCell}>
          Resource
        </div>
        {nodeIds.map((id) => {
          const info = nodes.find((n) => n.node === id);
          const tone = !info ? 'unknown' : info.ok ? 'ok' : 'bad';
          return (
            <div
              key={id}
              role="columnheader"
              className={`${styles.headCell} ${styles.nodeHead}`}
              data-testid={`node-column-${id}`}
              title={info && !info.ok ? `node ${id} could not be read: ${info.error ?? 'no answer'}` : labels.get(id)}
            >
              <span className={styles.nodeName}>
                <span className={`${styles.nodeDot} ${styles[`nodeDot-${tone}`]}`} aria-hidden="true" />
                node {id}
              </span>
              <span className={styles.nodeMeta}>
                {info ? (info.ok ? `${formatCount(info.keys)} key${info.keys === 1 ? '' : 's'}` : 'unreadable') : (labels.get(id) ?? '')}
              </span>
            </div>
          );
        })}
        <div
          role="columnheader"
          className={styles.headCell}
          title="What a client holding the majority token can count on: the quorum-th longest PTTL minus clock drift"
        >
          Validity{quorum !== null ? <span className={styles.nodeMeta}>quorum {quorum}</span> : null}
        </div>
      </div>
    </div>
  );
}

function NodeCell({
  cell,
  node,
  majority,
  t0,
  lease,
  overCeiling,
  hue,
  peers,
}: {
  /** This token's hue among the lock's tokens (lockHues). */
  hue: number | undefined;
  /** The lock's tokens: the chip's short form is unique among them. */
  peers: readonly string[];
  cell: Cell | undefined;
  node: number;
  majority: string | null;
  t0: number;
  lease: number;
  /** Its PTTL is above the cluster's lease ceiling. */
  overCeiling: boolean;
}) {
  if (!cell || !cell.known) {
    return (
      <div role="cell" className={`${styles.cell} ${styles.cellUnknown}`} data-testid="lock-cell" data-node={node} data-present="unknown">
        <span className={styles.cellNote}>unknown</span>
      </div>
    );
  }
  if (!cell.present || cell.token === null) {
    return (
      <div role="cell" className={`${styles.cell} ${styles.cellAbsent}`} data-testid="lock-cell" data-node={node} data-present="false">
        <span className="visually-hidden">no key</span>
        <span className={styles.cellDash} aria-hidden="true" />
      </div>
    );
  }
  const variant = majority === null ? 'plain' : cell.token === majority ? 'majority' : 'other';
  const pttl = cell.pttlMs ?? 0;
  return (
    <div
      role="cell"
      className={`${styles.cell} ${styles.cellPresent} ${variant === 'other' ? styles.cellOther : ''}`}
      style={hueStyle(cell.token, hue)}
      data-testid="lock-cell"
      data-node={node}
      data-present="true"
      data-token={cell.token}
      data-over-ceiling={overCeiling || undefined}
      title={overCeiling ? `node ${node}: PTTL above the cluster's lease ceiling` : undefined}
    >
      <TokenChip token={cell.token} variant={variant} className={styles.cellChip} tabbable={false} hue={hue} peers={peers} />
      {cell.pttlMs === -1 ? (
        <span className={styles.noTtl} title="This key never expires: a lock nobody can take again until an operator releases it">
          no TTL
        </span>
      ) : (
        <>
          {overCeiling ? <span className="visually-hidden">PTTL above the lease ceiling:</span> : null}
          <Countdown
            className={`${styles.cellTtl} ${overCeiling ? styles.overCeiling : ''}`}
            expiresAt={t0 + pttl}
            initialMs={pttl}
            watch
          />
          <CountdownBar className={styles.cellBar} expiresAt={t0 + pttl} initialMs={pttl} totalMs={lease} tone="token" />
        </>
      )}
    </div>
  );
}

/** `owner@host`, or the owner alone; null without one. */
function holderOf(view: LockView): string | null {
  const owner = view.meta?.owner;
  if (!owner) return null;
  return view.meta?.host ? `${owner}@${view.meta.host}` : owner;
}

/**
 * The line under the resource: the holder first (cut in its middle, never at its end, when the
 * column is narrow), then how many nodes, the purpose (the first part to give way) and the fence.
 */
function Subline({ view, nodeCount }: { view: LockView; nodeCount: number }) {
  const holder = holderOf(view);
  const count = view.state === 'split' ? `${view.tokens} tokens, none on ${view.quorum}` : `${view.holders} of ${nodeCount} nodes`;
  return (
    <>
      {holder ? (
        <>
          <MiddleText text={holder} className={styles.holder} title={`held by ${holder}`} />
          <span className={styles.subPart}> · </span>
        </>
      ) : null}
      <span className={styles.subPart}>{count}</span>
      {view.meta?.purpose ? (
        <span className={styles.purpose} title={view.meta.purpose}>
          {' · '}
          {view.meta.purpose}
        </span>
      ) : null}
      {view.fence !== null ? <span className={styles.subPart}> · fence {view.fence}</span> : null}
    </>
  );
}

/** What the resource's keyboard tooltip shows: the whole name, and who holds it. */
function fullName(name: string, view: LockView): string {
  const holder = holderOf(view);
  return holder ? `${name}\nheld by ${holder}` : name;
}

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
  const validityTone = view.state === 'expiring' ? 'warn' : 'ok';
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
      <div role="rowheader" className={styles.resourceCell}>
        {linkable ? (
          <Link
            href={`/locks/${encodeURIComponent(view.resource)}`}
            prefetch={false}
            className={`${styles.resource} full-tip`}
            data-full={fullName(view.resource, view)}
            data-testid="lock-resource"
            onClick={(e) => e.stopPropagation()}
          >
            <MiddleText text={view.resource} />
          </Link>
        ) : (
          <button
            type="button"
            className={`${styles.resource} ${styles.resourceButton} full-tip`}
            data-full={fullName(view.key, view)}
            data-testid="lock-resource"
            onClick={(e) => {
              e.stopPropagation();
              onOpen(row);
            }}
          >
            <MiddleText text={view.key} />
          </button>
        )}
        {view.noTtlNodes.length > 0 || view.overCeilingNodes.length > 0 ? (
          <span
            className={styles.flagMark}
            aria-hidden="true"
            title={[
              view.noTtlNodes.length ? `no TTL on node ${view.noTtlNodes.join(', ')}` : '',
              view.overCeilingNodes.length ? `lease above the ceiling on node ${view.overCeilingNodes.join(', ')}` : '',
            ]
              .filter(Boolean)
              .join(' · ')}
          >
            !
          </span>
        ) : null}
        <span className={styles.sub} data-testid="lock-subline">
          <Subline view={view} nodeCount={nodeIds.length} />
          {view.noTtlNodes.length > 0 && (
            <span className={styles.subWarn} title={`no TTL on node ${view.noTtlNodes.join(', ')}`}>
              {' '}
              · no TTL on node {view.noTtlNodes.join(', ')}
            </span>
          )}
          {view.overCeilingNodes.length > 0 && (
            <span
              className={styles.subWarn}
              title={`lease above the ceiling on node ${view.overCeilingNodes.join(', ')}: a client that does not keep the cluster's lease ceiling wrote this key`}
            >
              {' '}
              · lease above the ceiling on node {view.overCeilingNodes.join(', ')}
            </span>
          )}
        </span>
      </div>
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
      <div role="cell" className={styles.validityCell} data-testid="lock-validity">
        {view.majorityToken === null ? (
          <span className={styles.noMajority} title="No token is on a quorum of nodes: no client can count on this lock">
            no majority
          </span>
        ) : view.validityMs === null ? (
          <span className={styles.noTtl}>never expires</span>
        ) : (
          <>
            <Countdown
              className={`${styles.validity} ${styles[`validity-${validityTone}`]}`}
              expiresAt={t0 + view.validityMs}
              initialMs={view.validityMs}
              watch
            />
            <CountdownBar expiresAt={t0 + view.validityMs} initialMs={view.validityMs} totalMs={lease} tone={validityTone} />
          </>
        )}
      </div>
    </div>
  );
});
