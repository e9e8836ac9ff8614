'use client';

import { useQuery } from '@tanstack/react-query';
import { nodesQuery } from '@/lib/client/queries';
import { HistoryCharts } from '../charts/history-charts';
import { nodeState } from '../nodes/node-state';
import { ClusterBanner } from './cluster-banner';
import { skewMs } from '../ui/clock';
import { LockTotals } from './lock-totals';
import { useMastersReading } from '../shell/use-masters-reading';
import { NodeCard, NodeCardSkeleton } from './node-card';
import styles from './overview.module.css';
import { toneColor } from '../ui/palette';

/** The screen an operator opens first in an incident: can locks be granted, and what each master says. */
export function OverviewScreen() {
  const { data, error, isPending, dataUpdatedAt, refetch, isRefetchError } = useQuery(nodesQuery());
  const skew = data ? skewMs(data.readAt, dataUpdatedAt) : 0;
  const nodeCount = data?.nodes.length ?? 5;
  const reading = useMastersReading();

  return (
    <>
      <div className={styles.header}>
        <div>
          <h1 className={styles.title}>Overview</h1>
          <p className={styles.subtitle}>
            {data && data.mode !== 'unconfigured'
              ? `${data.nodes.length} independent Redis masters · quorum ${data.quorum} · lease ceiling ${formatSeconds(data.maxTtlMs)} · ${data.mode === 'sandbox' ? 'local sandbox cluster' : 'external masters'}`
              : 'Reading the masters…'}
          </p>
        </div>
        <div className={styles.headerMeta}>
          {isRefetchError && error ? (
            <span style={{ color: toneColor('bad') }} role="alert">
              last refresh failed: {error.message}
            </span>
          ) : null}
        </div>
      </div>

      {isPending ? (
        <section className={styles.banner} aria-busy="true" data-testid="cluster-banner-loading" data-loading-state="loading">
          <span className={`${styles.bannerIcon} ${styles.skeleton}`} />
          <div style={{ display: 'flex', flexDirection: 'column', gap: 10 }}>
            <span className={styles.skeleton} style={{ width: 260, height: 20 }} />
            <span className={styles.skeleton} style={{ width: 380, height: 14 }} />
          </div>
        </section>
      ) : error && !data ? (
        <div className={`callout callout-bad ${styles.errorBox}`} role="alert" data-testid="nodes-error">
          <span>
            <strong>Could not read the nodes.</strong> {error.message}
          </span>
          <button type="button" className="button" onClick={() => void refetch()}>
            Try again
          </button>
        </div>
      ) : data?.mode === 'unconfigured' ? (
        <p className="callout callout-warn" role="alert">
          No masters are configured{data.problem ? `: ${data.problem}` : ''}. Start the console with <code>npm start</code>, or set{' '}
          <code>REDLOCK_NODES</code>.
        </p>
      ) : data ? (
        <ClusterBanner data={data} skew={skew} reading={reading} />
      ) : null}

      <LockTotals />

      <section aria-labelledby="nodes-title">
        <div className={styles.sectionHead}>
          <h2 className={styles.sectionTitle} id="nodes-title">
            Masters
          </h2>
          <span className={styles.sectionMeta}>
            {data
              ? `${data.nodes.filter((n) => ['up', 'slow'].includes(nodeState(n).key)).length} up · ${data.verdict.usable} usable · ${data.nodes.filter((n) => n.verdict.level !== 'ok').length} with safety notes`
              : null}
          </span>
        </div>
        <div
          className={styles.cards}
          data-testid="node-cards"
          data-loading-state={isPending ? 'loading' : data?.nodes.length ? 'ready' : 'empty'}
        >
          {isPending
            ? Array.from({ length: 5 }, (_, i) => <NodeCardSkeleton key={i} />)
            : data?.nodes.map((node) => <NodeCard key={node.id} node={node} skew={skew} maxTtlMs={data.maxTtlMs} />)}
        </div>
      </section>

      <HistoryCharts nodeCount={nodeCount} />
    </>
  );
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
