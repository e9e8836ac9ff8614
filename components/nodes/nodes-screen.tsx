'use client';

import { useQuery } from '@tanstack/react-query';
import { useCallback, useMemo, useRef, useState } from 'react';
import type { NodesResponse } from '@/lib/api/nodes';
import { lockHoldersQuery } from '@/lib/client/ops-queries';
import { nodesQuery } from '@/lib/client/queries';
import { meQuery } from '@/lib/client/session';
import { ReadAge, skewMs } from '../ui/clock';
import { formatClock } from '../locks/format';
import { headlineUnknown } from '@/lib/client/masters-reading';
import { useMastersReading } from '../shell/use-masters-reading';
import { ActionDialog } from './action-dialog';
import { unavailableNodes, type ActionKind, type Outcome } from './actions';
import { criticalCounts } from './blast-radius';
import { MarkCleanDialog } from './mark-clean-dialog';
import { clusterTone } from './node-state';
import { NodeRow } from './node-row';
import { NodesNotices } from './nodes-notices';
import styles from './nodes.module.css';

type Open = { kind: ActionKind; node: number } | { kind: 'mark-clean'; node: number } | null;
type Toast = Outcome & { id: number };

/** Operate the sandbox masters: every action shows its blast radius before it runs, and is audited. */
export function NodesScreen() {
  const me = useQuery(meQuery());
  const nodes = useQuery(nodesQuery());
  const operator = me.data?.role === 'operator';
  const sandbox = me.data?.sandbox ?? false;
  const holders = useQuery(lockHoldersQuery());
  const [open, setOpen] = useState<Open>(null);
  const [toasts, setToasts] = useState<Toast[]>([]);
  const toastId = useRef(0);

  const pushToast = useCallback((o: Outcome) => {
    const id = ++toastId.current;
    setToasts((list) => [...list.slice(-2), { ...o, id }]);
    setTimeout(() => setToasts((list) => list.filter((t) => t.id !== id)), 8_000);
  }, []);

  const data = nodes.data;
  // Another console drives the supervisor: its actions would be refused here (409), so none are offered.
  const drivenBy = sandbox && data?.actionsBy && !data.actionsBy.self ? data.actionsBy.instance : null;
  const skew = data ? skewMs(data.readAt, nodes.dataUpdatedAt) : 0;
  const counts = useMemo(() => {
    if (!data || !holders.data) return null;
    return criticalCounts(
      holders.data.locks,
      data.nodes.map((n) => n.id),
      unavailableNodes(data.nodes),
      data.quorum,
    );
  }, [data, holders.data]);
  const openNode = data && open ? data.nodes.find((n) => n.id === open.node) : undefined;

  return (
    <>
      <div className={styles.header}>
        <div>
          <h1 className={styles.title}>Nodes</h1>
          <p className={styles.subtitle}>
            Break and mend the masters on purpose. Each action first shows its blast radius — the locks that would lose their majority — and
            every action is written to the audit log.
          </p>
        </div>
        <div className={styles.headerMeta}>
          {data ? <ClusterLine data={data} /> : null}
          <ReadAge at={data ? data.readAt + skew : null} prefix="nodes read" />
        </div>
      </div>

      <NodesNotices role={me.data?.role ?? null} sandbox={sandbox} drivenBy={drivenBy} />

      {nodes.isPending ? (
        <div className={styles.list} aria-busy="true" data-loading-state="loading">
          {Array.from({ length: 5 }, (_, i) => (
            <div key={i} className={styles.row} style={{ height: operator ? 128 : 76 }} />
          ))}
        </div>
      ) : nodes.error && !data ? (
        <div
          className="callout callout-bad"
          role="alert"
          data-testid="nodes-error"
          style={{ display: 'flex', justifyContent: 'space-between', alignItems: 'center', flexWrap: 'wrap', gap: 8 }}
        >
          <span>
            <strong>Could not read the nodes.</strong> {nodes.error.message}
          </span>
          <button type="button" className="button" onClick={() => void nodes.refetch()}>
            Try again
          </button>
        </div>
      ) : data?.mode === 'unconfigured' ? (
        <p className="callout callout-warn" role="alert">
          No masters are configured. Start the console with <code>npm start</code>, or set <code>REDLOCK_NODES</code>.
        </p>
      ) : data ? (
        <div className={styles.list} data-testid="node-rows" data-loading-state="ready">
          {data.nodes.map((node) => (
            <NodeRow
              key={node.id}
              node={node}
              skew={skew}
              operator={operator}
              sandbox={sandbox}
              drivenBy={drivenBy}
              counts={counts?.get(node.id) ?? null}
              holdersState={holders.isPending ? 'loading' : holders.error && !holders.data ? 'error' : 'ready'}
              onAction={(kind) => setOpen({ kind, node: node.id })}
            />
          ))}
        </div>
      ) : null}

      {open && openNode && data && open.kind !== 'mark-clean' ? (
        <ActionDialog
          key={`${open.kind}-${open.node}`}
          node={openNode}
          cluster={data}
          kind={open.kind}
          holders={{ data: holders.data, isPending: holders.isPending, error: holders.error }}
          onClose={() => setOpen(null)}
          onDone={(o) => {
            setOpen(null);
            pushToast(o);
          }}
        />
      ) : null}
      {open && openNode && data && open.kind === 'mark-clean' ? (
        <MarkCleanDialog node={openNode} maxTtlMs={data.maxTtlMs} onClose={() => setOpen(null)} onDone={pushToast} />
      ) : null}

      <div className={styles.toasts} role="status" aria-live="polite" data-testid="toasts">
        {toasts.map((t) => (
          <div key={t.id} className={`${styles.toast} ${styles[t.tone]}`}>
            <span>{t.text}</span>
            <button
              type="button"
              className="button button-ghost"
              style={{ padding: '0 6px' }}
              aria-label="Dismiss"
              onClick={() => setToasts((list) => list.filter((x) => x.id !== t.id))}
            >
              ×
            </button>
          </div>
        ))}
      </div>
    </>
  );
}

function ClusterLine({ data }: { data: NodesResponse }) {
  const v = data.verdict;
  const tone = clusterTone(v);
  const reading = useMastersReading();
  if (headlineUnknown(reading, data.nodes)) {
    return (
      <span className={`${styles.clusterLine} ${styles.unknown}`} data-testid="nodes-cluster-line" data-state="unknown">
        unknown whether locks can be granted · {reading.state === 'offline' ? 'the console is not answering' : reading.reason} · last read{' '}
        {formatClock(data.readAt)}
      </span>
    );
  }
  return (
    <span className={`${styles.clusterLine} ${styles[tone]}`} data-testid="nodes-cluster-line">
      {v.canGrant ? 'locks can be granted' : 'locks cannot be granted'} · {v.usable} of {v.configuredNodes} usable · quorum {v.quorum}
    </span>
  );
}
