'use client';

import { Countdown } from './countdown';
import type { MatrixRowData } from './matrix-row';
import { StateBadge } from './state-badge';
import { TokenChip } from './token-chip';
import styles from './lock-matrix.module.css';

/**
 * A key found by pattern (another library's layout) has no detail page: the API reads keys in
 * the console's layout only. This panel shows what the scan read for it, node by node.
 */
export function KeyInspector({ row, onClose }: { row: MatrixRowData; onClose: () => void }) {
  const { view, t0 } = row;
  return (
    <aside className={styles.inspector} aria-label={`Key ${view.key}`} data-testid="key-inspector">
      <div className={styles.inspectorHead}>
        <StateBadge state={view.state} />
        <code className={styles.inspectorKey}>{view.key}</code>
        <button type="button" className="button button-ghost" onClick={onClose} aria-label="Close the key inspector">
          ✕
        </button>
        <span className={`muted small ${styles.inspectorNote}`}>
          The key as each node holds it, read-only: keys found by pattern have no detail page. Esc closes.
        </span>
      </div>
      <table className={`table ${styles.inspectorTable}`}>
        <thead>
          <tr>
            <th scope="col">Node</th>
            <th scope="col">Value (token)</th>
            <th scope="col">PTTL</th>
          </tr>
        </thead>
        <tbody>
          {view.cells.map((cell) => (
            <tr key={cell.node}>
              <th scope="row">node {cell.node}</th>
              <td>
                {!cell.known ? (
                  <span className="muted">could not be read</span>
                ) : cell.token === null ? (
                  <span className="muted">no key</span>
                ) : (
                  <TokenChip
                    token={cell.token}
                    full
                    variant={view.majorityToken === null ? 'plain' : cell.token === view.majorityToken ? 'majority' : 'other'}
                  />
                )}
              </td>
              <td>
                {cell.present && cell.pttlMs !== null ? (
                  cell.pttlMs < 0 ? (
                    'no TTL'
                  ) : (
                    <Countdown expiresAt={t0 + cell.pttlMs} initialMs={cell.pttlMs} />
                  )
                ) : (
                  '—'
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </aside>
  );
}
