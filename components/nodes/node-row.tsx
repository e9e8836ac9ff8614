import type { NodeView } from '@/lib/api/nodes';
import type { ActionKind } from './actions';
import { NodeActionButtons } from './node-action-buttons';
import { NodeFacts } from './node-facts';
import { NodePills } from './node-pills';
import { nodeState, voteState } from './node-state';
import styles from './nodes.module.css';

/** One master on the Nodes screen: name and address, pills, facts, the locks it holds, and (operators) its actions. */
export function NodeRow({
  node,
  skew,
  operator,
  sandbox,
  drivenBy,
  counts,
  holdersState,
  onAction,
}: {
  node: NodeView;
  skew: number;
  operator: boolean;
  sandbox: boolean;
  drivenBy: string | null;
  counts: { holds: number; critical: number } | null;
  holdersState: 'loading' | 'error' | 'ready';
  onAction: (kind: ActionKind | 'mark-clean') => void;
}) {
  const state = nodeState(node);
  const vote = voteState(node);
  const rowTone = state.tone === 'bad' ? styles.bad : state.tone === 'warn' || vote.tone !== 'ok' ? styles.warn : '';
  return (
    <article
      className={`${styles.row} ${rowTone}`}
      aria-label={`node ${node.id}`}
      data-testid={`node-row-${node.id}`}
      data-state={state.key}
    >
      <div className={styles.rowMain}>
        <div>
          <div className={styles.nodeName}>node {node.id}</div>
          <div className={styles.nodeAddr}>{node.label}</div>
        </div>
        <NodePills node={node} state={state} vote={vote} skew={skew} />
        <NodeFacts node={node} />
        <NodeLocks node={node} counts={counts} holdersState={holdersState} />
      </div>
      {operator ? <NodeActionButtons node={node} sandbox={sandbox} drivenBy={drivenBy} onAction={onAction} /> : null}
    </article>
  );
}

/** The locks a node holds, and for how many its vote is the deciding one. */
function NodeLocks({
  node,
  counts,
  holdersState,
}: {
  node: NodeView;
  counts: { holds: number; critical: number } | null;
  holdersState: 'loading' | 'error' | 'ready';
}) {
  return (
    <div className={styles.locks} data-testid={`node-locks-${node.id}`}>
      {holdersState === 'loading' ? (
        'Reading locks…'
      ) : holdersState === 'error' ? (
        'Locks could not be read'
      ) : counts ? (
        <>
          <strong>{counts.holds.toLocaleString()}</strong> held lock{counts.holds === 1 ? '' : 's'} here
          <br />
          <span className={counts.critical ? styles.critical : ''}>
            deciding vote for <strong className={counts.critical ? styles.critical : ''}>{counts.critical.toLocaleString()}</strong>
          </span>
        </>
      ) : (
        '—'
      )}
    </div>
  );
}
