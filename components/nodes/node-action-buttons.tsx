import type { NodeView } from '@/lib/api/nodes';
import { ACTIONS, NETWORK_ACTIONS, PROCESS_ACTIONS, type ActionKind } from './actions';
import { canAct } from './node-state';
import styles from './nodes.module.css';

/**
 * An operator's actions on a node: process and network (sandbox only, those its state allows),
 * and marking it clean when it is quarantined or its sentinel unread.
 */
export function NodeActionButtons({
  node,
  sandbox,
  drivenBy,
  onAction,
}: {
  node: NodeView;
  sandbox: boolean;
  /** Another console that drives the supervisor's actions (this one's would be refused), or null. */
  drivenBy: string | null;
  onAction: (kind: ActionKind | 'mark-clean') => void;
}) {
  const allowed = canAct(node);
  const showMarkClean = node.up && (node.quarantine?.state === 'quarantined' || node.quarantine?.state === 'unknown');
  const button = (kind: ActionKind) => {
    const spec = ACTIONS[kind];
    const label = kind === 'heal' && node.fault === 'latency' ? 'Remove latency' : spec.label;
    return (
      <button
        key={kind}
        type="button"
        className={`${styles.act} ${styles[spec.style]}`}
        onClick={() => onAction(kind)}
        aria-label={`${label.replace('…', '')} node ${node.id}`}
        data-testid={`node-action-${node.id}-${kind}`}
        aria-haspopup="dialog"
      >
        {label}
      </button>
    );
  };
  return (
    <div className={styles.actions} data-testid={`node-actions-${node.id}`}>
      {sandbox && drivenBy !== null ? (
        <div className={styles.group} role="group" aria-label={`Process and network actions for node ${node.id}`}>
          <span className={styles.groupLabel}>Process · Network</span>
          <span className={styles.actionsNote} data-testid={`node-actions-elsewhere-${node.id}`}>
            run through console {drivenBy}
          </span>
        </div>
      ) : sandbox ? (
        <>
          <div className={styles.group} role="group" aria-label={`Process actions for node ${node.id}`}>
            <span className={styles.groupLabel}>Process</span>
            {PROCESS_ACTIONS.filter((k) => allowed[k]).map(button)}
          </div>
          <div className={styles.group} role="group" aria-label={`Network actions for node ${node.id}`}>
            <span className={styles.groupLabel}>Network</span>
            {NETWORK_ACTIONS.filter((k) => allowed[k]).map(button)}
            {node.fault === null ? <span className={styles.actionsNote}>no fault proxy</span> : null}
          </div>
        </>
      ) : null}
      <div className={styles.group} role="group" aria-label={`Epoch actions for node ${node.id}`}>
        <span className={styles.groupLabel}>Epoch</span>
        {showMarkClean ? (
          <button
            type="button"
            className={`${styles.act} ${styles.caution}`}
            onClick={() => onAction('mark-clean')}
            aria-haspopup="dialog"
            data-testid={`node-action-${node.id}-mark-clean`}
          >
            {/* Named by its visible words first (label in name): "Mark clean node 3…". */}
            Mark clean<span className="visually-hidden"> node {node.id}</span>…
          </button>
        ) : (
          <span className={styles.actionsNote}>{node.up ? 'clean — nothing to mark' : 'unreachable'}</span>
        )}
      </div>
    </div>
  );
}
