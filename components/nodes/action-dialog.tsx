'use client';

import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { NODE_ACTION_LIMITS, nodeActionSchema, type NodeAction } from '@/lib/api/node-actions';
import type { NodeView, NodesResponse } from '@/lib/api/nodes';
import { opsKeys, runNodeAction } from '@/lib/client/ops-queries';
import { queryKeys } from '@/lib/client/queries';
import { ACTIONS, unavailableNodes, type ActionKind } from './actions';
import { Impact, type HoldersState } from './action-impact';
import { blastRadius } from './blast-radius';
import { formatTime } from '../ui/format';
import { Modal } from './modal';
import { persistenceInfo } from './node-state';
import { PERSISTENCE_CHOICES, type Persistence } from './restart-outcome';
import styles from './nodes.module.css';

export interface Outcome {
  tone: 'ok' | 'warn' | 'bad';
  text: string;
}

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
  const queryClient = useQueryClient();
  const current = PERSISTENCE_CHOICES.find((c) => c.value === node.persistence)?.value ?? 'aof-always';
  const [persistence, setPersistence] = useState<Persistence>(current);
  const [delayS, setDelayS] = useState('0');
  const [latencyMs, setLatencyMs] = useState('200');
  const [jitterMs, setJitterMs] = useState('0');
  // The blast radius is only as good as the lock list under it: read it again as the dialog opens.
  useEffect(() => {
    void queryClient.refetchQueries({ queryKey: opsKeys.lockHolders });
  }, [queryClient]);

  const delay = Number(delayS);
  const latency = Number(latencyMs);
  const jitter = Number(jitterMs);

  const action = (): NodeAction => {
    switch (kind) {
      case 'start':
        return { action: 'start', persistence };
      case 'restart':
        return delay !== 0 ? { action: 'restart', persistence, delayMs: Math.round(delay * 1000) } : { action: 'restart', persistence };
      case 'latency':
        return jitterMs.trim() !== '' && jitter !== 0
          ? { action: 'latency', latencyMs: latency, jitterMs: jitter }
          : { action: 'latency', latencyMs: latency };
      default:
        return { action: kind } as NodeAction;
    }
  };
  // The API's own schema decides (lib/api/node-actions.ts): the form cannot drift from what the server accepts.
  const invalid = !nodeActionSchema.safeParse(action()).success;

  const mutation = useMutation({
    mutationFn: () => runNodeAction(node.id, action()),
    onSuccess: async (res) => {
      await Promise.all([
        queryClient.invalidateQueries({ queryKey: queryKeys.nodes }),
        queryClient.invalidateQueries({ queryKey: opsKeys.all }),
        queryClient.invalidateQueries({ queryKey: queryKeys.locks }),
        queryClient.invalidateQueries({ queryKey: queryKeys.audit }),
      ]);
      const restartNote = res.node.restartAt ? `, restarts at ${formatTime(res.node.restartAt)}` : '';
      onDone({
        tone: spec.effect === 'restores' ? 'ok' : 'warn',
        text: `node ${node.id}: ${kind} done — process ${res.node.state}${restartNote}. Written to the audit log.`,
      });
    },
  });

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
        <div className={styles.form}>
          <fieldset className={styles.radios} aria-describedby="persistence-hint">
            <legend>Persistence when it starts</legend>
            {PERSISTENCE_CHOICES.map((c) => (
              <label key={c.value} className={styles.radio} title={c.hint}>
                <input
                  type="radio"
                  name="persistence"
                  value={c.value}
                  checked={persistence === c.value}
                  onChange={() => setPersistence(c.value)}
                />
                {c.label}
              </label>
            ))}
            <span className={`${styles.hint} ${styles.radiosHint}`} id="persistence-hint" data-testid="persistence-hint">
              {PERSISTENCE_CHOICES.find((c) => c.value === persistence)?.hint}
            </span>
          </fieldset>
          {kind === 'restart' ? (
            <label className={styles.field}>
              Delay before starting (s)
              <input
                type="number"
                min={NODE_ACTION_LIMITS.delayMs.min / 1000}
                max={NODE_ACTION_LIMITS.delayMs.max / 1000}
                step={1}
                value={delayS}
                onChange={(e) => setDelayS(e.target.value)}
                aria-describedby="delay-hint"
              />
              <span className={styles.hint} id="delay-hint">
                0 = at once · up to {NODE_ACTION_LIMITS.delayMs.max / 1000}
              </span>
            </label>
          ) : null}
        </div>
      ) : null}

      {kind === 'latency' ? (
        <div className={styles.form}>
          <label className={styles.field}>
            Latency (ms, round trip)
            <input
              type="number"
              min={NODE_ACTION_LIMITS.latencyMs.min}
              max={NODE_ACTION_LIMITS.latencyMs.max}
              step={1}
              value={latencyMs}
              onChange={(e) => setLatencyMs(e.target.value)}
            />
          </label>
          <label className={styles.field}>
            Jitter (ms, random extra)
            <input
              type="number"
              min={NODE_ACTION_LIMITS.jitterMs.min}
              max={NODE_ACTION_LIMITS.jitterMs.max}
              step={1}
              value={jitterMs}
              onChange={(e) => setJitterMs(e.target.value)}
            />
          </label>
        </div>
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
