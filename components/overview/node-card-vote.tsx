import type { NodeView } from '@/lib/api/nodes';
import { Countdown, CountdownBar } from '../ui/clock';
import { quarantineWhy, type NodeStateInfo, type VoteInfo } from '../nodes/node-state';
import { quarantineEndsAt } from '../nodes/quarantine-clock';
import { toneClass } from './node-card-tone';
import styles from './overview.module.css';

function voteDetail(node: NodeView, key: string, stateDetail: string): string {
  if (key === 'absent') {
    if (node.restartAt !== null) return 'restart scheduled';
    return stateDetail;
  }
  if (key === 'unknown') return 'quarantined at the next acquire';
  if (key === 'refused')
    return node.refusal?.reason === 'unsafe-eviction'
      ? `unsafe-eviction: maxmemory-policy ${node.maxmemoryPolicy ?? '?'}`
      : 'ceiling-mismatch: another maxTtlMs';
  if (key === 'votes') return node.quarantine?.origin ? `clean · ${node.quarantine.origin}` : 'clean: its vote counts';
  return node.quarantine?.message ?? '';
}

/** Whether the node's vote counts: the word (or the quarantine's cause), the time left with its bar, or what stands in the way. */
export function NodeCardVote({
  node,
  state,
  vote,
  skew,
  maxTtlMs,
}: {
  node: NodeView;
  state: NodeStateInfo;
  vote: VoteInfo;
  skew: number;
  maxTtlMs: number;
}) {
  const quarantineUntil = quarantineEndsAt(node, skew);
  const why = vote.key === 'quarantined' ? quarantineWhy(node) : null;
  return (
    <div className={styles.vote} data-testid={`node-quarantine-${node.id}`} data-state={vote.key}>
      <div className={styles.voteLine}>
        <span className={`${styles.voteLabel} ${toneClass(vote.tone)}`} title={why ? `${vote.label}: ${why.label}` : undefined}>
          <span aria-hidden="true">{vote.key === 'votes' ? '✓' : vote.key === 'quarantined' ? '◐' : vote.tone === 'bad' ? '✕' : '!'}</span>
          {/* Quarantined: the cause says more than the word (the countdown and the bar say it is a quarantine). */}
          {why ? (
            <span>
              <span className="visually-hidden">{vote.label}: </span>
              <span data-testid={`node-quarantine-cause-${node.id}`}>{why.label}</span>
            </span>
          ) : (
            vote.label
          )}
        </span>
        {quarantineUntil !== null && vote.key === 'quarantined' ? (
          <span className={styles.voteTime} aria-label="quarantine time left">
            <Countdown until={quarantineUntil} done="ending…" testId={`node-quarantine-left-${node.id}`} />
          </span>
        ) : null}
      </div>
      {why ? (
        <span
          className={styles.voteDetail}
          title={`${why.label}: ${why.detail}${why.note ? ` · ${why.note}` : ''}`}
          data-testid={`node-quarantine-why-${node.id}`}
        >
          {why.detail}
          {why.note ? ` · ${why.note}` : ''}
        </span>
      ) : null}
      {quarantineUntil !== null && vote.key === 'quarantined' ? (
        <CountdownBar until={quarantineUntil} totalMs={maxTtlMs} className={styles.bar} fillClassName={styles.barFill} />
      ) : (
        <span className={styles.voteDetail} title={vote.detail}>
          {voteDetail(node, vote.key, state.detail)}
        </span>
      )}
    </div>
  );
}
