import type { NodeView } from '@/lib/api/nodes';
import { Modal } from '../nodes/modal';
import { persistenceInfo, VERDICT_LABEL, VERDICT_TONE } from '../nodes/node-state';
import { toneClass } from './node-card-tone';
import styles from './overview.module.css';

/** The node's safety verdict: its level, the first reason, and the way to all of them. */
export function NodeCardVerdict({ node, onMore }: { node: NodeView; onMore: () => void }) {
  const verdictTone = VERDICT_TONE[node.verdict.level];
  return (
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
          <button type="button" className={styles.moreButton} onClick={onMore}>
            {node.verdict.reasons.length > 1 ? `All ${node.verdict.reasons.length} safety reasons` : 'Safety details'}
            <span className="visually-hidden"> for node {node.id}</span>
            <span aria-hidden="true"> →</span>
          </button>
        </>
      )}
    </section>
  );
}

/** Every safety reason of the node, in a dialog. */
export function SafetyReasons({ node, onClose }: { node: NodeView; onClose: () => void }) {
  return (
    <Modal
      title={`Node ${node.id}: ${VERDICT_LABEL[node.verdict.level]}`}
      onClose={onClose}
      footer={
        <button type="button" className="button" onClick={onClose}>
          Close
        </button>
      }
    >
      <p className="muted" style={{ marginTop: 0 }}>
        {node.label} · {persistenceInfo(node.persistence).label} · {node.maxmemoryPolicy ?? 'eviction policy unknown'}
      </p>
      <ol className={styles.reasonList}>
        {node.verdict.reasons.map((r) => (
          <li key={r}>{r}</li>
        ))}
      </ol>
    </Modal>
  );
}
