import Link from 'next/link';
import type { LockView } from '@/lib/api/locks';
import { MiddleText } from '../ui/middle-text';
import type { MatrixRowData } from './window-merge';
import styles from './lock-matrix.module.css';

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

/**
 * The row's resource: a link to its detail (or, for a key the console cannot name, a button that
 * inspects it), a mark when a key has no TTL or a lease above the ceiling, and the line under it.
 */
export function ResourceCell({
  row,
  nodeCount,
  linkable,
  onOpen,
}: {
  row: MatrixRowData;
  nodeCount: number;
  linkable: boolean;
  onOpen: (row: MatrixRowData) => void;
}) {
  const { view } = row;
  return (
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
        <Subline view={view} nodeCount={nodeCount} />
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
  );
}
