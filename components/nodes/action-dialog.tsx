'use client';

import { useState } from 'react';
import { nodeActionSchema } from '@/lib/api/node-actions';
import type { NodeView, NodesResponse } from '@/lib/api/nodes';
import { LatencyFields, PersistenceFields } from './action-fields';
import { ACTIONS, unavailableNodes, type ActionKind, type Outcome } from './actions';
import { Impact, type HoldersState } from './action-impact';
import { blastRadius } from './blast-radius';
import { Modal } from './modal';
import { nodeActionRequest } from './node-action-request';
import { persistenceInfo } from './node-state';
import { PERSISTENCE_CHOICES, type Persistence } from './restart-outcome';
import { useNodeAction } from './use-node-action';
import styles from './nodes.module.css';

/** Confirm one node action, after showing what it would cost: the locks that lose their majority, and whether new locks can still be granted. */
export function ActionDialog({
  node,
  cluster,
  kind,
  holders,
  onClose,
  onDone,
}: {
  node: NodeView;
  cluster: NodesResponse;
  kind: ActionKind;
  holders: HoldersState;
  onClose: () => void;
  onDone: (outcome: Outcome) => void;
}) {
  const spec = ACTIONS[kind];
  const current = PERSISTENCE_CHOICES.find((c) => c.value === node.persistence)?.value ?? 'aof-always';
  const [persistence, setPersistence] = useState<Persistence>(current);
  const [delayS, setDelayS] = useState('0');
  const [latencyMs, setLatencyMs] = useState('200');
  const [jitterMs, setJitterMs] = useState('0');
  const request = () => nodeActionRequest(kind, { persistence, delayS, latencyMs, jitterMs });
  // The API's own schema decides (lib/api/node-actions.ts): the form cannot drift from what the server accepts.
  const invalid = !nodeActionSchema.safeParse(request()).success;
  const mutation = useNodeAction(node, kind, request, onDone);

  const unavailable = unavailableNodes(cluster.nodes);
  const radius = holders.data && spec.effect !== 'restores' ? blastRadius(holders.data.locks, node.id, unavailable, cluster.quorum) : null;
  const verb = kind === 'restart' ? 'Restart' : kind === 'latency' ? 'Add latency to' : spec.label;
  const losing = radius?.losing.length ?? 0;
  const usableAfter = spec.effect === 'removes' ? cluster.verdict.usable - (node.usable ? 1 : 0) : cluster.verdict.usable;
  const dangerous = spec.effect === 'removes' && (losing > 0 || usableAfter < cluster.quorum);

  return (
    <Modal
      title={`${verb} node ${node.id}?`}
      onClose={onClose}
      wide
      tone={spec.effect === 'restores' ? 'ok' : dangerous ? 'bad' : 'warn'}
      testId="action-dialog"
      footer={
        <>
          <button type="button" className="button" onClick={onClose}>
            Cancel
          </button>
          <button
            type="button"
            className={`button ${dangerous ? styles.dangerButton : 'button-primary'}`}
            disabled={mutation.isPending || invalid}
            onClick={() => mutation.mutate()}
            data-testid="confirm-action"
          >
            {mutation.isPending ? 'Working…' : `${verb} node ${node.id}`}
          </button>
        </>
      }
    >
      <p className={styles.lead}>
        <span className="mono">{node.label}</span> · now {node.up ? 'up' : 'down'} · persistence {persistenceInfo(node.persistence).label}.{' '}
        {spec.describe(node)}
      </p>

      {kind === 'restart' || kind === 'start' ? (
        <PersistenceFields
          persistence={persistence}
          onPersistence={setPersistence}
          delayS={delayS}
          onDelay={setDelayS}
          withDelay={kind === 'restart'}
        />
      ) : null}
      {kind === 'latency' ? (
        <LatencyFields latencyMs={latencyMs} onLatency={setLatencyMs} jitterMs={jitterMs} onJitter={setJitterMs} />
      ) : null}

      <Impact
        node={node}
        cluster={cluster}
        kind={kind}
        persistence={persistence}
        usableAfter={usableAfter}
        radius={radius}
        holders={holders}
      />

      {mutation.error ? (
        <p className={styles.errorText} role="alert">
          The action failed: {mutation.error.message}
        </p>
      ) : null}
    </Modal>
  );
}
