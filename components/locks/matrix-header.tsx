import { formatCount } from './format';
import styles from './lock-matrix.module.css';

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
