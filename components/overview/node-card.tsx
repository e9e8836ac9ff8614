'use client';

import { useState } from 'react';
import type { NodeView } from '@/lib/api/nodes';
import { nodeState, voteState } from '../nodes/node-state';
import { ReadAge } from '../ui/clock';
import { NodeCardFacts } from './node-card-facts';
import { toneClass } from './node-card-tone';
import { NodeCardVerdict, SafetyReasons } from './node-card-verdict';
import { NodeCardVote } from './node-card-vote';
import styles from './overview.module.css';

/**
 * One master at a glance. Fixed size whatever it says, so the grid never jumps while readings
 * stream in; a down node keeps its card and says so.
 */
export function NodeCard({ node, skew, maxTtlMs }: { node: NodeView; skew: number; maxTtlMs: number }) {
  const [showReasons, setShowReasons] = useState(false);
  const state = nodeState(node);
  const vote = voteState(node);
  const checkedAt = node.checkedAt + skew;
  const cardTone = state.tone === 'bad' ? 'bad' : state.tone === 'warn' || vote.tone !== 'ok' ? 'warn' : null;

  return (
    <article
      className={`${styles.card} ${cardTone ? toneClass(cardTone) : ''}`}
      data-testid={`node-card-${node.id}`}
      data-state={state.key}
      aria-label={`node ${node.id}`}
    >
      <header className={styles.cardHead}>
        <div style={{ minWidth: 0 }}>
          <span className={styles.cardName}>node {node.id}</span>
          <span className={styles.cardAddr} title={node.label}>
            {node.label}
          </span>
        </div>
        <span className={`${styles.pill} ${toneClass(state.tone)}`} title={state.detail}>
          <span data-testid={`node-state-${node.id}`}>{state.label}</span>
        </span>
      </header>

      <NodeCardVote node={node} state={state} vote={vote} skew={skew} maxTtlMs={maxTtlMs} />
      <NodeCardFacts node={node} />
      <NodeCardVerdict node={node} onMore={() => setShowReasons(true)} />

      <footer className={styles.cardFoot}>
        <ReadAge at={checkedAt} />
        <span title={node.role ? `role ${node.role}` : undefined}>
          {node.version ? `redis ${node.version}` : node.process ? `process ${node.process}` : ''}
        </span>
      </footer>

      {showReasons ? <SafetyReasons node={node} onClose={() => setShowReasons(false)} /> : null}
    </article>
  );
}

/** The same footprint as a card, while the first reading is on its way. */
export function NodeCardSkeleton() {
  return (
    <div className={styles.card} aria-hidden="true" data-testid="node-card-skeleton">
      <div className={styles.cardHead}>
        <div style={{ display: 'flex', flexDirection: 'column', gap: 6 }}>
          <span className={styles.skeleton} style={{ width: 70, height: 14 }} />
          <span className={styles.skeleton} style={{ width: 120, height: 10 }} />
        </div>
        <span className={styles.skeleton} style={{ width: 52, height: 20, borderRadius: 999 }} />
      </div>
      <div className={styles.vote}>
        <span className={styles.skeleton} style={{ width: '60%', height: 12 }} />
      </div>
      <div className={styles.facts} style={{ display: 'flex', flexDirection: 'column', gap: 12, paddingTop: 14 }}>
        {[80, 65, 75, 60, 70, 55].map((w, i) => (
          <span key={i} className={styles.skeleton} style={{ width: `${w}%`, height: 12 }} />
        ))}
      </div>
      <div className={styles.verdict}>
        <span className={styles.skeleton} style={{ width: '90%', height: 12 }} />
      </div>
      <div className={styles.cardFoot} />
    </div>
  );
}
