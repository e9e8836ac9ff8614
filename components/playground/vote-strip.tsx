import type { CSSProperties } from 'react';
import type { VoteView } from '@/lib/api/locks';
import { exhaustive } from '@/lib/exhaustive';
import { formatClock } from '@/components/locks/format';
import type { OperationKind } from './session-store';
import styles from './playground.module.css';

type Tone = 'ok' | 'warn' | 'bad' | 'info' | 'muted';

function explain(vote: VoteView, kind: OperationKind): { text: string; tone: Tone } {
  switch (vote.reason) {
    case 'ok':
      return { text: kind === 'acquire' ? 'granted' : kind === 'extend' ? 'extended' : 'deleted', tone: 'ok' };
    case 'contended':
      return { text: 'held by another token', tone: 'warn' };
    case 'quarantined':
      return {
        text: vote.quarantineUntil ? `quarantined until ${formatClock(vote.quarantineUntil)}` : 'quarantined (lost its data)',
        tone: 'info',
      };
    case 'lost':
      return { text: 'key is no longer ours', tone: 'warn' };
    case 'not-held':
      return { text: 'nothing of ours here', tone: 'muted' };
    case 'timeout':
      return { text: 'no reply in time', tone: 'bad' };
    case 'pending':
      return { text: 'not waited for: decided early', tone: 'muted' };
    case 'error':
      return { text: 'error', tone: 'bad' };
    case 'not-asked':
      return { text: 'not asked', tone: 'muted' };
    case 'unsafe-eviction':
      return { text: 'its eviction policy could drop a lock', tone: 'bad' };
    case 'ceiling-mismatch':
      return { text: 'records another lease ceiling (maxTtlMs)', tone: 'bad' };
    default:
      return exhaustive(vote.reason, 'vote reason');
  }
}

/** One tile per node: how it voted and why. */
export function VoteStrip({ votes, kind, quorum }: { votes: VoteView[]; kind: OperationKind; quorum: number | null }) {
  const inFavour = votes.filter((v) => v.vote === 'for').length;
  const notCounted = votes.filter((v) => v.vote === 'against' && (v.reason === 'pending' || v.reason === 'not-asked')).length;
  const against = votes.length - inFavour - notCounted;
  const sorted = votes.slice().sort((a, b) => a.node - b.node);
  return (
    <div className={styles.voteBlock}>
      <div className={styles.voteSummary}>
        <strong>{inFavour} for</strong> · {against} against{notCounted > 0 ? ` · ${notCounted} not waited for` : ''}
        {quorum !== null && kind !== 'release' ? <span className="muted"> · quorum {quorum}</span> : null}
      </div>
      <ol className={styles.votes} aria-label="Votes by node" data-testid="votes" style={{ '--n': sorted.length } as CSSProperties}>
        {sorted.map((vote) => {
          const { text, tone } = explain(vote, kind);
          return (
            <li
              key={vote.node}
              className={`${styles.vote} ${styles[`vote-${tone}`]}`}
              data-testid={`vote-node-${vote.node}`}
              data-vote={vote.vote}
              data-reason={vote.reason}
            >
              <span className={styles.voteHead}>
                <span className={styles.voteNode}>node {vote.node}</span>
                <span
                  className={styles.voteMark}
                  aria-label={vote.vote === 'for' ? 'voted for' : tone === 'muted' ? 'not counted' : 'voted against'}
                >
                  {vote.vote === 'for' ? '✓' : tone === 'muted' ? '–' : '✕'}
                </span>
              </span>
              <span className={styles.voteReason}>{text}</span>
              {vote.detail ? (
                <span className={styles.voteDetail} title={vote.detail}>
                  {vote.detail}
                </span>
              ) : null}
              <span className={styles.voteLabel}>{vote.label}</span>
            </li>
          );
        })}
      </ol>
    </div>
  );
}
