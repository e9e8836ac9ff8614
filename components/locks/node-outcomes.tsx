import type { ForceReleaseResponse } from '@/lib/api/locks';
import { formatTtl } from './format';
import { TokenChip } from './token-chip';
import styles from './force-release-dialog.module.css';

type Outcome = ForceReleaseResponse['nodes'][number]['outcome'];
const OUTCOME: Record<Outcome, { label: string; tone: 'ok' | 'warn' | 'bad' | 'muted' | 'danger' }> = {
  'would-delete': { label: 'will delete', tone: 'danger' },
  deleted: { label: 'deleted', tone: 'ok' },
  'other-holder': { label: 'left alone: other token', tone: 'warn' },
  absent: { label: 'nothing there', tone: 'muted' },
  unreachable: { label: 'unreachable', tone: 'bad' },
};

/**
 * A force-release node by node: what each held (the released token highlighted), what it will do
 * or did, and (after) what it holds now. "Asking every node…" until the answer is in.
 */
export function NodeOutcomes({
  nodes,
  labels,
  token,
  showAfter = false,
}: {
  nodes: ForceReleaseResponse['nodes'] | null;
  labels: Map<number, string>;
  token: string;
  showAfter?: boolean;
}) {
  if (!nodes) {
    return (
      <div className={styles.outcomesLoading} aria-busy="true">
        Asking every node…
      </div>
    );
  }
  return (
    <table className={styles.outcomes} data-testid="force-release-nodes">
      <thead>
        <tr>
          <th scope="col">Node</th>
          <th scope="col">{showAfter ? 'Held before' : 'Holds now'}</th>
          <th scope="col">{showAfter ? 'Result' : 'Will'}</th>
          {showAfter && <th scope="col">After</th>}
        </tr>
      </thead>
      <tbody>
        {nodes.map((n) => {
          const info = OUTCOME[n.outcome];
          return (
            <tr key={n.node} data-testid={`outcome-node-${n.node}`} data-outcome={n.outcome}>
              <th scope="row">
                node {n.node} <span className={styles.nodeLabel}>{labels.get(n.node) ?? ''}</span>
              </th>
              <td>
                {n.before === null ? (
                  <span className="muted">could not read</span>
                ) : n.before.token === null ? (
                  <span className="muted">no key</span>
                ) : (
                  <span className={styles.holds}>
                    <TokenChip token={n.before.token} variant={n.before.token === token ? 'majority' : 'other'} />
                    {n.before.pttlMs !== null && (
                      <span className="muted small mono">{n.before.pttlMs < 0 ? 'no TTL' : formatTtl(n.before.pttlMs)}</span>
                    )}
                  </span>
                )}
              </td>
              <td>
                <span className={`${styles.pill} ${styles[`pill-${info.tone}`]}`}>{info.label}</span>
                {n.error && n.outcome === 'unreachable' ? <span className={styles.err}>{n.error}</span> : null}
              </td>
              {showAfter && (
                <td>
                  {n.after === null ? (
                    <span className="muted">—</span>
                  ) : n.after.token === null ? (
                    <span className="muted">no key</span>
                  ) : (
                    <TokenChip token={n.after.token} variant="other" />
                  )}
                </td>
              )}
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
