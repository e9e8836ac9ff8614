'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useRef } from 'react';
import { useCountdowns } from '@/components/locks/countdown';
import { formatCount } from '@/components/locks/format';
import { nodesQuery } from '@/lib/client/queries';
import { meQuery } from '@/lib/client/session';
import { AcquireForm } from './acquire-form';
import { LockCard } from './lock-card';
import { OperationItem } from './operation-item';
import { clearLog, usePlayground } from './session-store';
import styles from './playground.module.css';

export function Playground() {
  const { data: me, isPending } = useQuery(meQuery());
  if (isPending) return null;
  if (me?.role !== 'operator') {
    return (
      <section className={styles.refused} data-testid="playground-refused">
        <h1 className={styles.title}>Playground</h1>
        <div className={styles.refusedCard} role="alert">
          <span className={styles.refusedIcon} aria-hidden="true">
            <svg
              width="22"
              height="22"
              viewBox="0 0 24 24"
              fill="none"
              stroke="currentColor"
              strokeWidth="2"
              strokeLinecap="round"
              strokeLinejoin="round"
            >
              <rect x="4" y="11" width="16" height="10" rx="2" />
              <path d="M8 11V7a4 4 0 0 1 8 0v4" />
            </svg>
          </span>
          <strong>Operators only</strong>
          <p>
            The playground takes, extends and releases real locks on the masters. You are signed in as{' '}
            <span className={styles.roleTag}>{me?.role ?? 'nobody'}</span>, which can look but not touch.
          </p>
          <Link className="button" href="/locks">
            Open the quorum matrix
          </Link>
        </div>
      </section>
    );
  }
  return <PlaygroundScreen />;
}

function PlaygroundScreen() {
  const { locks, ops } = usePlayground();
  const { data: cluster } = useQuery(nodesQuery());
  const root = useRef<HTMLDivElement>(null);
  useCountdowns(root);
  const maxTtl = cluster?.maxTtlMs ?? null;

  return (
    <div ref={root} className={styles.screen} data-testid="playground">
      <div className={styles.titleRow}>
        <div>
          <h1 className={styles.title}>Playground</h1>
          <p className={styles.subtitle}>
            Take, extend and release locks by hand on the real masters. Every answer shows how each node voted.
          </p>
        </div>
        {cluster && (
          <div
            className={`${styles.clusterPill} ${cluster.verdict.canGrant ? styles.clusterOk : styles.clusterBad}`}
            data-testid="playground-cluster"
          >
            <span className={styles.clusterDot} aria-hidden="true" />
            <span>
              <strong>{cluster.verdict.canGrant ? 'Locks can be granted' : 'Locks cannot be granted'}</strong>
              <span className="muted">
                {' '}
                · {cluster.verdict.usable} of {cluster.verdict.configuredNodes} usable · quorum {cluster.quorum} · max TTL{' '}
                {formatCount(cluster.maxTtlMs)} ms
              </span>
            </span>
          </div>
        )}
      </div>

      <div className={styles.grid}>
        <AcquireForm maxTtl={maxTtl} />
        <div className={styles.column}>
          <section className={styles.panel} aria-labelledby="session-locks-title">
            <div className={styles.panelHead}>
              <h2 id="session-locks-title">
                Your locks <span className={styles.count}>{locks.filter((l) => l.status === 'held').length} held</span>
              </h2>
              <span className="muted small">This browser session; tokens stay here so you can extend and release them.</span>
            </div>
            {locks.length === 0 ? (
              <div className={styles.emptyPanel} data-testid="session-locks-empty">
                <strong>No locks yet</strong>
                <span>Acquire one on the left. Try the same resource twice to see a 409 with the contended votes.</span>
              </div>
            ) : (
              <ul className={styles.lockList} data-testid="session-locks">
                {locks.map((lock) => (
                  <LockCard key={lock.id} lock={lock} />
                ))}
              </ul>
            )}
          </section>

          <section className={styles.panel} aria-labelledby="ops-title">
            <div className={styles.panelHead}>
              <h2 id="ops-title">
                Operations <span className={styles.count}>{ops.length}</span>
              </h2>
              {ops.length > 0 && (
                <button type="button" className="button button-ghost small" onClick={clearLog}>
                  Clear
                </button>
              )}
            </div>
            {ops.length === 0 ? (
              <p className="muted small">Each acquire, extend and release lands here with its votes, node by node.</p>
            ) : (
              <ol className={styles.ops} data-testid="operations">
                {ops.map((op) => (
                  <OperationItem key={op.id} op={op} quorum={cluster?.quorum ?? null} />
                ))}
              </ol>
            )}
          </section>
        </div>
      </div>
    </div>
  );
}
