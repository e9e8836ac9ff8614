'use client';

import { useState } from 'react';
import type { NodeView } from '@/lib/api/nodes';
import { Modal } from '../nodes/modal';
import {
  evictionTone,
  formatOffset,
  formatRtt,
  nodeState,
  persistenceInfo,
  quarantineWhy,
  voteState,
  VERDICT_LABEL,
  VERDICT_TONE,
  type Tone,
} from '../nodes/node-state';
import { formatDuration } from '../ui/format';
import { Countdown, CountdownBar, ReadAge } from '../ui/clock';
import { quarantineEndsAt } from '../nodes/quarantine-clock';
import styles from './overview.module.css';

const toneClass = (tone: Tone) => styles[tone] ?? '';

/**
 * One master at a glance. Fixed size whatever it says, so the grid never jumps while readings
 * stream in; a down node keeps its card and says so.
 */
export function NodeCard({ node, skew, maxTtlMs }: { node: NodeView; skew: number; maxTtlMs: number }) {
  const [showReasons, setShowReasons] = useState(false);
  const state = nodeState(node);
  const vote = voteState(node);
  const persistence = persistenceInfo(node.persistence);
  const checkedAt = node.checkedAt + skew;
  const verdictTone = VERDICT_TONE[node.verdict.level];
  const cardTone = state.tone === 'bad' ? 'bad' : state.tone === 'warn' || vote.tone !== 'ok' ? 'warn' : null;
  const dim = (value: string) => (node.up ? value : '—');
  const quarantineUntil = quarantineEndsAt(node, skew);
  const why = vote.key === 'quarantined' ? quarantineWhy(node) : null;

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

      <div className={styles.vote} data-testid={`node-quarantine-${node.id}`} data-state={vote.key}>
        <div className={styles.voteLine}>
          <span className={`${styles.voteLabel} ${toneClass(vote.tone)}`} title={why ? `${vote.label}: ${why.label}` : undefined}>
            <span aria-hidden="true">
              {vote.key === 'votes' ? '✓' : vote.key === 'quarantined' ? '◐' : vote.tone === 'bad' ? '✕' : '!'}
            </span>
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

      <dl className={styles.facts}>
        <dt>RTT</dt>
        <dd className={node.rttMs === null ? styles.dim : node.rttMs > 50 ? styles.warn : ''}>{dim(formatRtt(node.rttMs))}</dd>
        <dt>Clock offset</dt>
        <dd className={node.clockOffsetMs === null ? styles.dim : ''} title="the node's clock minus this console's, RTT-corrected">
          {dim(formatOffset(node.clockOffsetMs))}
        </dd>
        <dt>Persistence</dt>
        <dd className={node.up ? toneClass(persistence.tone) : styles.dim}>{node.up || node.persistence ? persistence.label : '—'}</dd>
        <dt>Eviction</dt>
        <dd
          className={node.up ? toneClass(evictionTone(node.maxmemoryPolicy)) : styles.dim}
          title={node.refusal?.reason === 'unsafe-eviction' ? node.refusal.message : (node.maxmemoryPolicy ?? undefined)}
        >
          {dim(node.maxmemoryPolicy ?? '—')}
          {node.up && node.refusal?.reason === 'unsafe-eviction' ? ' · votes against' : ''}
        </dd>
        <dt>Uptime</dt>
        <dd className={node.up ? '' : styles.dim}>{dim(formatDuration(node.uptimeMs))}</dd>
        <dt>Fault proxy</dt>
        <dd className={node.fault === null || node.fault === 'pass' ? styles.dim : styles.warn} title={node.faultDetail ?? undefined}>
          {node.fault === null ? 'none' : node.fault === 'pass' ? 'pass-through' : (node.faultDetail ?? node.fault)}
        </dd>
      </dl>

      <section
        className={styles.verdict}
        aria-label={`safety verdict of node ${node.id}`}
        data-testid={`node-verdict-${node.id}`}
        data-level={node.verdict.level}
      >
        <div className={styles.verdictHead}>
          <span className={styles.verdictTitle}>Safety</span>
          <span className={`${styles.pill} ${toneClass(verdictTone)}`}>{VERDICT_LABEL[node.verdict.level]}</span>
        </div>
        {node.verdict.reasons.length === 0 ? (
          <p className={styles.verdictOk}>Nothing found that can cost a lock its mutual exclusion.</p>
        ) : (
          <>
            <p className={styles.verdictReason}>{node.verdict.reasons[0]}</p>
            {/* The visible words start the accessible name (WCAG 2.5.3, label in name): a voice user says what they see. */}
            <button type="button" className={styles.moreButton} onClick={() => setShowReasons(true)}>
              {node.verdict.reasons.length > 1 ? `All ${node.verdict.reasons.length} safety reasons` : 'Safety details'}
              <span className="visually-hidden"> for node {node.id}</span>
              <span aria-hidden="true"> →</span>
            </button>
          </>
        )}
      </section>

      <footer className={styles.cardFoot}>
        <ReadAge at={checkedAt} />
        <span title={node.role ? `role ${node.role}` : undefined}>
          {node.version ? `redis ${node.version}` : node.process ? `process ${node.process}` : ''}
        </span>
      </footer>

      {showReasons ? (
        <Modal
          title={`Node ${node.id}: ${VERDICT_LABEL[node.verdict.level]}`}
          onClose={() => setShowReasons(false)}
          footer={
            <button type="button" className="button" onClick={() => setShowReasons(false)}>
              Close
            </button>
          }
        >
          <p className="muted" style={{ marginTop: 0 }}>
            {node.label} · {persistence.label} · {node.maxmemoryPolicy ?? 'eviction policy unknown'}
          </p>
          <ol className={styles.reasonList}>
            {node.verdict.reasons.map((r) => (
              <li key={r}>{r}</li>
            ))}
          </ol>
        </Modal>
      ) : null}
    </article>
  );
}

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
