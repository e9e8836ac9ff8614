import type { NodeView } from '@/lib/api/nodes';
import { Countdown } from '../ui/clock';
import { quarantineEndsAt } from './quarantine-clock';
import { quarantineWhy, type NodeStateInfo, type VoteInfo } from './node-state';
import styles from './nodes.module.css';

/**
 * A node's pills: its process state, its vote (with the quarantine's countdown), why it is
 * quarantined, why the lock core refuses it, and when a delayed restart starts it.
 */
export function NodePills({ node, state, vote, skew }: { node: NodeView; state: NodeStateInfo; vote: VoteInfo; skew: number }) {
  const why = vote.key === 'quarantined' ? quarantineWhy(node) : null;
  const quarantineUntil = quarantineEndsAt(node, skew);
  const restartAt = node.restartAt !== null ? node.restartAt + skew : null;
  return (
    <div className={styles.pills}>
      <span className={`${styles.pill} ${styles[state.tone]}`} title={state.detail} data-testid={`nodes-state-${node.id}`}>
        {state.label}
      </span>
      <span className={`${styles.pill} ${styles[vote.tone]}`} title={vote.detail} data-testid={`nodes-vote-${node.id}`}>
        {vote.label}
        {quarantineUntil !== null && vote.key === 'quarantined' ? (
          <>
            &nbsp;
            <Countdown until={quarantineUntil} done="ending" />
          </>
        ) : null}
      </span>
      {why ? (
        <span
          className={`${styles.pill} ${styles.neutral}`}
          data-testid={`nodes-cause-${node.id}`}
          title={why.note ? `${why.label}: ${why.detail} · ${why.note}` : `${why.label}: ${why.detail}`}
        >
          {why.label}
          {why.label === 'restart detected' ? (
            <>
              &nbsp;·&nbsp;<span className="mono">{why.detail.replace('process ', '')}</span>
            </>
          ) : null}
        </span>
      ) : null}
      {vote.key === 'refused' && node.refusal ? (
        <span className={`${styles.pill} ${styles.bad}`} data-testid={`nodes-refusal-${node.id}`} title={node.refusal.message}>
          {node.refusal.reason}
        </span>
      ) : null}
      {restartAt !== null ? (
        <span className={`${styles.pill} ${styles.neutral}`}>
          restarts in&nbsp;
          <Countdown until={restartAt} done="now" />
        </span>
      ) : null}
    </div>
  );
}
