import { formatClock, formatCount } from '@/components/locks/format';
import type { OperationRecord } from './session-store';
import { VoteStrip } from './vote-strip';
import styles from './playground.module.css';

const KIND_LABEL: Record<OperationRecord['kind'], string> = { acquire: 'Acquire', extend: 'Extend', release: 'Release' };

function outcomeOf(op: OperationRecord): { text: string; tone: 'ok' | 'warn' | 'bad' } {
  if (op.ok) {
    if (op.kind === 'release' && op.deleted === 0) return { text: 'nothing to release', tone: 'warn' };
    return {
      text: op.kind === 'acquire' ? 'granted' : op.kind === 'extend' ? 'extended' : `released · ${op.deleted ?? 0} keys deleted`,
      tone: 'ok',
    };
  }
  if (op.status === 409) return { text: op.code === 'LOCK_EXPIRED' ? '409 · expired' : '409 · contended', tone: 'warn' };
  if (op.status === 503) return { text: '503 · no quorum', tone: 'bad' };
  if (op.status === null) return { text: 'no answer', tone: 'bad' };
  return { text: `${op.status} · ${op.code ?? 'error'}`, tone: 'bad' };
}

/** One acquire, extend or release in the operations log: its outcome, fence, validity and each node's vote. */
export function OperationItem({ op, quorum }: { op: OperationRecord; quorum: number | null }) {
  const outcome = outcomeOf(op);
  return (
    <li className={styles.op} data-testid="operation" data-kind={op.kind} data-ok={op.ok ? 'true' : 'false'} data-status={op.status ?? ''}>
      <div className={styles.opHead}>
        <span className={`${styles.kind} ${styles[`kind-${op.kind}`]}`}>
          {KIND_LABEL[op.kind]}
          {op.auto ? ' (keep-alive)' : ''}
        </span>
        <code className={styles.opResource}>{op.resources.join(', ')}</code>
        <span className={`${styles.outcome} ${styles[`outcome-${outcome.tone}`]}`} data-testid="operation-outcome">
          {outcome.text}
        </span>
        <span className={styles.opFacts}>
          {op.fence !== null && (
            <span>
              fence <strong className={styles.mono}>{op.fence}</strong>
            </span>
          )}
          {op.validityMs !== null && (
            <span>
              validity <strong className={styles.mono}>{formatCount(Math.round(op.validityMs))} ms</strong>
            </span>
          )}
          <span className="muted">
            {formatClock(op.at)} · {Math.round(op.durationMs)} ms
          </span>
        </span>
      </div>
      {!op.ok && (
        <p className={styles.opError} role={op.auto ? undefined : 'alert'}>
          {op.message}
        </p>
      )}
      {op.votes && op.votes.length > 0 ? (
        <VoteStrip votes={op.votes} kind={op.kind} quorum={quorum} />
      ) : !op.ok ? (
        <p className="muted small">No per-node votes in this answer (the request was refused before reaching the nodes).</p>
      ) : null}
    </li>
  );
}
